// The Picture mode's form controls: where the picture comes from, and which layer, head and
// opacity the main view draws. Plain labelled inputs, so keyboards and screen readers need
// nothing special.
import { el } from '../../../src/views/dom.js';
import { t } from '../../i18n.js';
import { samplePicture, startCamera, stopCamera } from './picture-source.js';

/**
 * Drop zone, file picker, sample and camera; `take` gets a Blob, File or video frame;
 * `follower` (picture-follow.js) runs the camera's frames one after another while Follow is on.
 */
export function pictureSources(take, fail, follower) {
  const file = el('input', {
    type: 'file',
    accept: 'image/png,image/jpeg,image/gif,image/webp,image/bmp',
    class: 'picture-file',
    onchange: () => file.files[0] && take(file.files[0]),
  });
  const drop = el('label', { class: 'picture-drop' }, el('span', { text: t('pictureDrop') }), file);
  drop.addEventListener('dragover', (event) => {
    event.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (event) => {
    event.preventDefault();
    drop.classList.remove('over');
    const picked = event.dataTransfer?.files?.[0];
    if (picked) take(picked);
  });
  const sample = el('button', {
    type: 'button',
    class: 'picture-sample',
    text: t('pictureSample'),
    onclick: () => samplePicture().then(take, fail),
  });
  let video = null;
  const shoot = el('button', { type: 'button', text: t('pictureTake'), hidden: true });
  const follow = el('button', {
    type: 'button',
    class: 'picture-follow',
    text: t('pictureFollow'),
    hidden: true,
    'aria-pressed': 'false',
  });
  const following = (on) => {
    if (on) follower.start(video);
    else follower.stop();
    follow.setAttribute('aria-pressed', String(on));
    follow.textContent = t(on ? 'pictureFollowStop' : 'pictureFollow');
  };
  const camera = el('button', {
    type: 'button',
    class: 'picture-camera',
    text: t('pictureCamera'),
  });
  const stop = () => {
    following(false);
    stopCamera(video);
    video?.remove();
    video = null;
    shoot.hidden = follow.hidden = true;
    camera.textContent = t('pictureCamera');
  };
  camera.addEventListener('click', async () => {
    if (video) return stop();
    try {
      video = await startCamera();
      video.className = 'picture-video';
      camera.after(video);
      shoot.hidden = follow.hidden = false;
      camera.textContent = t('pictureCameraStop');
    } catch (error) {
      stop();
      fail(error);
    }
  });
  shoot.addEventListener('click', () => video && take(video));
  follow.addEventListener('click', () => video && following(!follower.following));
  const hasCamera = Boolean(globalThis.navigator?.mediaDevices?.getUserMedia);
  const element = el(
    'div',
    { class: 'picture-sources' },
    drop,
    sample,
    hasCamera && camera,
    shoot,
    follow,
  );
  return { element, stopCamera: stop };
}

/** Layer, head (or their mean), opacity, focus reset and exports, bound to `state`. */
export function pictureControls(state, { changed, exportPng, exportJson, exportSnapshot }) {
  const layer = el('select', { class: 'picture-layer' });
  const head = el('select', { class: 'picture-head' });
  const opacity = el('input', {
    type: 'range',
    min: 0,
    max: 100,
    value: Math.round(state.opacity * 100),
    class: 'picture-opacity',
  });
  layer.addEventListener('change', () => {
    state.layer = Number(layer.value);
    changed();
  });
  head.addEventListener('change', () => {
    state.head = Number(head.value);
    changed();
  });
  opacity.addEventListener('input', () => {
    state.opacity = Number(opacity.value) / 100;
    changed();
  });
  const field = (text, input) =>
    el('label', { class: 'picture-field' }, el('span', { text }), input);
  const element = el(
    'div',
    { class: 'picture-controls' },
    field(t('pictureLayer'), layer),
    field(t('pictureHead'), head),
    field(t('pictureOpacity'), opacity),
    el('button', {
      type: 'button',
      class: 'picture-focus-clear',
      text: t('pictureFocusClear'),
      onclick: () => {
        state.focus = -1;
        changed();
      },
    }),
    el('button', { type: 'button', text: t('pictureExportPng'), onclick: exportPng }),
    el('button', { type: 'button', text: t('pictureExportJson'), onclick: exportJson }),
    el('button', {
      type: 'button',
      class: 'picture-export-snapshot',
      text: t('pictureExportSnapshot'),
      onclick: exportSnapshot,
    }),
  );
  const sync = () => {
    layer.value = String(state.layer);
    head.value = String(state.head);
  };
  // names: the model's layer and head numbers when a snapshot holds only some of them.
  const setShape = (layers, heads, names = null) => {
    layer.replaceChildren(
      ...Array.from({ length: layers }, (_, i) =>
        el('option', { value: i, text: names?.layers[i] ?? i }),
      ),
    );
    head.replaceChildren(
      el('option', { value: -1, text: t('pictureHeadMean') }),
      ...Array.from({ length: heads }, (_, i) =>
        el('option', { value: i, text: names?.heads[i] ?? i }),
      ),
    );
    sync();
  };
  return { element, sync, setShape };
}
