package dev.cks.nodeops.testing;

import java.util.List;

import dev.cks.nodeops.operation.MaintenanceWindow;
import dev.cks.nodeops.operation.MaintenanceWindow.Day;

/** Maintenance windows as users write them, for tests: the one window builder of the test code. */
public final class TestWindows {
    private TestWindows() {
    }

    public static MaintenanceWindow window(String zone, String start, String end, Day... days) {
        MaintenanceWindow window = new MaintenanceWindow();
        window.setDays(List.of(days));
        window.setStart(start);
        window.setEnd(end);
        window.setTimeZone(zone);
        return window;
    }
}
