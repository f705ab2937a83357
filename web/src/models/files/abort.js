// Cancellation: every source checks the caller's AbortSignal between steps and hands fetch and
// file reads the same signal, so a cancelled load stops its downloads and rejects with an error
// named 'AbortError' (whatever reason the caller aborted with, kept as its `cause`).

/** The error a cancelled load (or, with its own message, a cancelled generation) rejects with. */
export function abortError(signal, message = 'the model load was cancelled') {
  const reason = signal?.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  const error = new DOMException(message, 'AbortError');
  if (reason !== undefined) Object.defineProperty(error, 'cause', { value: reason });
  return error;
}

export function throwIfAborted(signal) {
  if (signal?.aborted) throw abortError(signal);
}

/** Runs `work`; an error it throws after the signal fired becomes the AbortError. */
export async function abortable(signal, work) {
  throwIfAborted(signal);
  try {
    return await work();
  } catch (error) {
    if (signal?.aborted) throw abortError(signal);
    throw error;
  }
}
