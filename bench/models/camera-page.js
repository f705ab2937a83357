// The camera benchmark page (camera.mjs --browser): Chromium's fake camera into a <video>, each
// side's run(video) on its frames (camera-core.js), then this tree's build following the camera
// for a few seconds as the page's Picture mode does (web/demo/model/picture/picture-follow.js).
import { CameraFollower } from '../../web/demo/model/picture/picture-follow.js';
import { frameRunner, runCameraBenchmark, sideModules } from './camera-core.js';

const build = new URL('build/', import.meta.url);

async function startCamera() {
  const stream = await navigator.mediaDevices.getUserMedia({
    video: { width: 640, height: 480 },
    audio: false,
  });
  const video = document.createElement('video');
  video.muted = true;
  video.playsInline = true;
  video.srcObject = stream;
  document.body.append(video);
  await video.play();
  return video;
}

window.runBenchmark = async ({ before, frames, backend, model: name, seconds }) => {
  const folder = new URL(`${name}/`, build).href;
  const config = await (await fetch(new URL('preprocessor_config.json', folder))).json();
  const sources = [];
  if (before) sources.push(['before', new URL(before, location.href)]);
  sources.push(['after', new URL('/web/src/', location.href)]);
  const sides = [];
  for (const [label, src] of sources) {
    const m = await sideModules(src);
    const attention = await m.createAttention({ backend, threads: 1, models: true });
    const model = await m.loadModel(folder, { attention });
    const plan = m.imageProcessor(config);
    sides.push({
      name: `${label} (${model.info.backend})`,
      model,
      attention,
      interpret: m.interpret,
      buffer: m.buffer,
      preprocess: async (picture) => m.preprocessImage(await m.readPixels(picture), plan),
    });
  }
  const video = await startCamera();
  console.log(
    `${name}, the fake camera's ${video.videoWidth} x ${video.videoHeight} frames read from a ` +
      `<video>; requestVideoFrameCallback: ${typeof video.requestVideoFrameCallback === 'function'}`,
  );
  // One frame kept still, for comparing the sides' maps on the same pixels.
  const still = document.createElement('canvas');
  Object.assign(still, { width: video.videoWidth, height: video.videoHeight });
  still.getContext('2d').drawImage(video, 0, 0);
  await runCameraBenchmark({
    sides,
    pictures: [video],
    still,
    frames,
    log: console.log,
    cpuMs: window.rendererCpuMs,
  });
  // Following the camera: this tree's build, one frame in flight, the rest dropped.
  const after = sides.at(-1);
  const run = frameRunner(after);
  let rate = null;
  let cameraFrames = 0;
  const countFrames = () => {
    cameraFrames++;
    video.requestVideoFrameCallback(countFrames);
  };
  video.requestVideoFrameCallback(countFrames);
  const follower = new CameraFollower(run, (r) => (rate = r));
  const c0 = await window.rendererCpuMs();
  const t0 = performance.now();
  follower.start(video);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  follower.stop();
  const wall = (performance.now() - t0) / 1000;
  const cpu = (await window.rendererCpuMs()) - c0;
  console.log(
    `${after.name} following the camera for ${wall.toFixed(1)} s: ${rate.shown} frames shown ` +
      `(${(rate.shown / wall).toFixed(1)} frames/s; the last 2 s ${rate.fps.toFixed(1)}), ` +
      `${rate.dropped} frame callbacks dropped while one ran (the camera's frames seen: ` +
      `${cameraFrames}; on this thread a frame's run holds back its callbacks); renderer ` +
      `CPU ${(cpu / rate.shown).toFixed(1)} ms a frame shown`,
  );
  for (const side of sides) {
    side.model.dispose();
    side.attention.dispose();
  }
};
document.body.dataset.ready = 'true';
