// The CSP test page's own script (an external file: the policy forbids inline ones). It counts
// policy violations into the page, so a test or a reader can see that there were none, and wires
// the text box to the live widget's `text` attribute.
const violations = document.getElementById('csp-violations');
let count = 0;
document.addEventListener('securitypolicyviolation', (event) => {
  count += 1;
  violations.textContent = `${count} (${event.violatedDirective}: ${event.blockedURI || 'inline'})`;
});

const input = document.getElementById('csp-input');
const live = document.getElementById('csp-live');
input.addEventListener('input', () => live.setAttribute('text', input.value));
