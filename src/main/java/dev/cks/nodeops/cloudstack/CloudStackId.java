package dev.cks.nodeops.cloudstack;

/** What a CloudStack id looks like in the API: a UUID (the resource's {@code uuid} column). */
public final class CloudStackId {
    /** For schema rules: a CR field naming a CloudStack resource is refused at admission unless it is one. */
    public static final String PATTERN = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";

    private CloudStackId() {
    }
}
