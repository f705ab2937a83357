// Following the camera: the Picture mode runs the model on the camera's frames one after another.
// One frame is in flight at a time; a frame the camera shows meanwhile is dropped, never queued,
// so the maps keep up with the camera instead of falling further behind it. Frames come from
// requestVideoFrameCallback where the browser has it (one call per new video frame), else
// requestAnimationFrame. The rate is the frames shown over the last FPS_WINDOW_MS.

const FPS_WINDOW_MS = 2000;

export class CameraFollower {
  /**
   * @param {(video: HTMLVideoElement) => Promise<unknown>} run runs and draws one frame
   * @param {(rate: { fps: number, shown: number, dropped: number }) => void} report after
   *   each frame shown
   */
  constructor(run, report) {
    this.run = run;
    this.report = report;
    this.loop = null;
  }

  get following() {
    return this.loop !== null;
  }

  start(video) {
    this.stop();
    const loop = { video, busy: false, shown: 0, dropped: 0, times: [] };
    this.loop = loop;
    const schedule = () => {
      if (this.loop !== loop) return;
      if (typeof video.requestVideoFrameCallback === 'function') {
        video.requestVideoFrameCallback(tick);
      } else {
        requestAnimationFrame(tick);
      }
    };
    const tick = async () => {
      if (this.loop !== loop) return;
      schedule();
      if (loop.busy) {
        loop.dropped++;
        return;
      }
      loop.busy = true;
      try {
        await this.run(video);
        if (this.loop !== loop) return;
        const now = performance.now();
        loop.shown++;
        loop.times.push(now);
        while (loop.times.length > 2 && now - loop.times[0] > FPS_WINDOW_MS) loop.times.shift();
        const span = now - loop.times[0];
        const fps = span > 0 ? ((loop.times.length - 1) * 1000) / span : 0;
        this.report({ fps, shown: loop.shown, dropped: loop.dropped });
      } finally {
        loop.busy = false;
      }
    };
    schedule();
  }

  stop() {
    this.loop = null;
  }
}
