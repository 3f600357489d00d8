package dev.cks.nodeops.cloudstack;

/**
 * When to ask for another page. {@code count} is the server's total of matches; the page-length
 * checks stop the loop when resources vanish between pages and the total is never reached.
 */
public final class PagePlan {

    private PagePlan() {
    }

    public static boolean hasNextPage(int pageSize, long count, int itemsOnThisPage, long itemsSoFar) {
        if (itemsOnThisPage == 0 || itemsOnThisPage < pageSize) {
            return false;
        }
        return itemsSoFar < count;
    }

    /** The number of calls a full listing of {@code count} items takes (at least one). */
    public static long callsNeeded(long count, int pageSize) {
        return Math.max(1, (count + pageSize - 1) / pageSize);
    }
}
