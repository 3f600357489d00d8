package dev.cks.nodeops.cloudstack;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Reads the INI file the CloudStack cloud controller manager uses ({@code cloud-config}). Only
 * what that format needs: sections, {@code key = value}, {@code ;}/{@code #} comments and
 * optional double quotes around values (gcfg, which the CCM uses, allows them).
 */
public final class CloudConfigIni {

    private CloudConfigIni() {
    }

    /** Keys of one section, lower-cased; an absent section gives an empty map. */
    public static Map<String, String> section(String ini, String sectionName) {
        Map<String, String> values = new LinkedHashMap<>();
        String current = null;
        for (String rawLine : ini.split("\\R")) {
            String line = rawLine.strip();
            if (line.isEmpty() || line.startsWith(";") || line.startsWith("#")) {
                continue;
            }
            if (line.startsWith("[") && line.endsWith("]")) {
                current = line.substring(1, line.length() - 1).strip();
                continue;
            }
            int separator = line.indexOf('=');
            if (separator < 0 || current == null || !current.equalsIgnoreCase(sectionName)) {
                continue;
            }
            String key = line.substring(0, separator).strip().toLowerCase(Locale.ROOT);
            values.put(key, unquote(line.substring(separator + 1).strip()));
        }
        return values;
    }

    private static String unquote(String value) {
        if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
            return value.substring(1, value.length() - 1).replace("\\\"", "\"").replace("\\\\", "\\");
        }
        return value;
    }
}
