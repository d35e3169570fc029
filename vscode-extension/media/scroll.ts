// Keeping the newest turn in view. The conversation scrolls in its own box above the
// question box (a normal footer, never over the text), so scrolling that box to its end
// shows the newest turn's end, References included. A user who scrolled up to read is
// left where they are until they scroll back down or ask something.

const SLACK_PX = 48; // this close to the end counts as "at the end"

export class Follower {
  private following = true;

  constructor(private readonly box: HTMLElement) {
    box.addEventListener("scroll", () => {
      this.following = this.distanceToEnd() <= SLACK_PX;
    }, { passive: true });
    // The box changes height (the question box grows, the view is resized): stay at the end.
    new ResizeObserver(() => {
      if (this.following) this.toEnd();
    }).observe(box);
  }

  private distanceToEnd(): number {
    return this.box.scrollHeight - this.box.scrollTop - this.box.clientHeight;
  }

  private toEnd(): void {
    this.box.scrollTop = this.box.scrollHeight;
  }

  /** The newest turn changed: follow it, unless the user is reading further up. */
  changed(): void {
    if (this.following) this.toEnd();
  }

  /** A new turn (or a whole conversation): show its end whatever the position was. */
  jump(): void {
    this.following = true;
    this.toEnd();
  }
}
