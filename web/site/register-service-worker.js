// Registers the site's service worker (sw.js at the site's root, written by
// scripts/build-site.mjs, which adds this module to the built pages): after the first visit the
// pages work offline. The source tree has no sw.js, so pages served from web/ never load this.
if ('serviceWorker' in navigator) {
  navigator.serviceWorker
    // The whole site: the helper Workers' scripts under src/ must be served offline too.
    .register(new URL('./sw.js', import.meta.url), { scope: new URL('./', import.meta.url).href })
    .catch((error) => console.warn(`attnlens: no offline copy of this site: ${error.message}`));
}
