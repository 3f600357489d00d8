package dev.cks.nodeops.upgrade;

import java.util.ArrayList;
import java.util.List;

/**
 * What the ISO canary's script (verify-iso.sh) found, read from its Job's log: one line per check, then its
 * verdict. A log without a verdict line (the script stopped before judging, or the log is gone) is no verdict:
 * the canary could not tell, and nothing is upgraded on a guess.
 */
record IsoVerdict(Result result, List<String> checked, List<String> problems) {
    /** Passed: every check held. Failed: at least one did not. None: the script reached no verdict. */
    enum Result { Passed, Failed, None }

    static final String PREFIX = "iso-canary: ";
    private static final String OK = "ok ";
    private static final String BAD = "bad ";
    private static final String VERDICT = "verdict ";

    IsoVerdict {
        checked = List.copyOf(checked);
        problems = List.copyOf(problems);
    }

    /** Pure: the verdict in a log. A "passed" beside a failed check is read as Failed: the checks decide, not the last line. */
    static IsoVerdict read(String log) {
        List<String> checked = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        String said = null;
        for (String line : log == null ? new String[0] : log.split("\n")) {
            int at = line.indexOf(PREFIX);
            if (at < 0) {
                continue;
            }
            String text = line.substring(at + PREFIX.length()).strip();
            if (text.startsWith(OK)) {
                checked.add(text.substring(OK.length()));
            } else if (text.startsWith(BAD)) {
                problems.add(text.substring(BAD.length()));
            } else if (text.startsWith(VERDICT)) {
                said = text.substring(VERDICT.length());
            }
        }
        Result result = said == null ? Result.None : !problems.isEmpty() || !"passed".equals(said) ? Result.Failed : Result.Passed;
        return new IsoVerdict(result, checked, problems);
    }
}
