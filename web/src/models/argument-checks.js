// The package's argument checks ((value, name, ...) -> value, or the TypeError / RangeError of
// errors.js), as the models entry uses them: one import site, so the shared module can move
// without touching the rest of web/src/models/.
export {
  boolean,
  integer,
  oneOf,
  optionsObject,
  rangeError,
  shapeError,
  typeError,
} from '../checks.js';
