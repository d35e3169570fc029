// Where Lantern tells the user about a question while the conversation is on screen, and
// where only when it is not. Notifications sit at the bottom right of the window: over the
// question box, Ask and an approval's buttons when the view is in the secondary side bar.
// Pure functions, no VS Code API.

/** Where a question's progress shows: in the view's own progress bar while the side bar
 * view is visible (its Stop cancels), in the status bar while the editor tab is, else a
 * notification with Cancel. */
export type ProgressPlace = "view" | "window" | "notification";

export function progressPlace(location: "sideBar" | "editor", viewVisible: boolean): ProgressPlace {
  if (!viewVisible) return "notification";
  return location === "sideBar" ? "view" : "window";
}

/** An approval also needs a notification when no visible view shows it, once. */
export function approvalNeedsNotification(approval: { inView: boolean; notified: boolean }, viewVisible: boolean): boolean {
  return !approval.notified && !(approval.inView && viewVisible);
}
