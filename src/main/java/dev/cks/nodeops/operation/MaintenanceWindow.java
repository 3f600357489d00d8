package dev.cks.nodeops.operation;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * When an operation may start work on a node: on these days, from start to end, in this time zone
 * (kured's --reboot-days/--start-time/--end-time/--time-zone, system-upgrade-controller's window).
 * Nothing new starts outside it; what is in progress when it closes finishes, or stops at the next
 * safe boundary (onClose). The schedule itself is {@link WindowSchedule}.
 */
@ValidationRule(value = "self.start != self.end", message = "window.start and window.end must differ; for a whole day write start: \"00:00\", end: \"24:00\"")
// The API server's own time zone database answers; an unknown zone makes the function fail, and the request with it.
@ValidationRule(value = "timestamp('2000-01-01T00:00:00Z').getHours(self.timeZone) >= 0",
        message = "window.timeZone must be an IANA time zone name such as UTC, Europe/Berlin or America/New_York")
public class MaintenanceWindow {
    public enum Day { Mon, Tue, Wed, Thu, Fri, Sat, Sun }

    public enum OnClose {
        /** A node in progress when the window closes is finished; the next waits for the window. */
        FinishInProgress,
        /** Work in progress stops at the next safe boundary (between drain steps, before an upgrade Job starts), as when paused. */
        StopAtSafeBoundary
    }

    @JsonPropertyDescription("The days a window starts on; a window whose end is before its start (22:00-04:00) ends the next day.")
    @Required
    @Size(min = 1, max = 7)
    private List<Day> days = new ArrayList<>();

    @JsonPropertyDescription("Local start time, HH:MM (24 h) in timeZone.")
    @Required
    @Pattern("^([01][0-9]|2[0-3]):[0-5][0-9]$")
    private String start;

    @JsonPropertyDescription("Local end time, HH:MM (24 h) in timeZone; 24:00 is the end of the day. Before start: the window ends the next day.")
    @Required
    @Pattern("^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$")
    private String end;

    @JsonPropertyDescription("IANA time zone of start and end, e.g. Europe/Berlin; daylight saving time is followed.")
    @Default("UTC")
    private String timeZone = "UTC";

    @JsonPropertyDescription("What work in progress does when the window closes: FinishInProgress (default) or StopAtSafeBoundary.")
    @Default("FinishInProgress")
    private OnClose onClose = OnClose.FinishInProgress;

    public List<Day> getDays() { return days; }
    public void setDays(List<Day> days) { this.days = days; }
    public String getStart() { return start; }
    public void setStart(String start) { this.start = start; }
    public String getEnd() { return end; }
    public void setEnd(String end) { this.end = end; }
    public String getTimeZone() { return timeZone; }
    public void setTimeZone(String timeZone) { this.timeZone = timeZone; }
    public OnClose getOnClose() { return onClose; }
    public void setOnClose(OnClose onClose) { this.onClose = onClose; }
}
