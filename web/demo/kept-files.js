// The reader's own model files, kept in this browser (IndexedDB holds File objects as they are,
// on disk) so that a reload or a later visit finds them; never in the link, which cannot carry
// them. One set at a time: new files replace it, and "Forget these files" deletes it. The files
// are checked again on every load, like any file from outside.

const DATABASE = 'attnlens-files';
const STORE = 'files';
const KEY = 'picked';

function openDatabase() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DATABASE, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

// One request in its own transaction; resolves with its result once the transaction is done.
async function transact(mode, makeRequest) {
  if (typeof indexedDB === 'undefined') throw new Error('no IndexedDB in this browser');
  const db = await openDatabase();
  try {
    return await new Promise((resolve, reject) => {
      const transaction = db.transaction(STORE, mode);
      const request = makeRequest(transaction.objectStore(STORE));
      transaction.oncomplete = () => resolve(request.result);
      transaction.onerror = () => reject(transaction.error);
      transaction.onabort = () => reject(transaction.error ?? new Error('aborted'));
    });
  } finally {
    db.close();
  }
}

/** Keeps `files` (File[]) for next time, in place of any kept before. */
export function keepFiles(files) {
  return transact('readwrite', (store) => store.put(files, KEY));
}

/** The files kept, or null. */
export async function keptFiles() {
  const files = await transact('readonly', (store) => store.get(KEY));
  const valid = Array.isArray(files) && files.length && files.every((f) => f instanceof File);
  return valid ? files : null;
}

/** Deletes the kept files. */
export function forgetFiles() {
  return transact('readwrite', (store) => store.delete(KEY));
}
