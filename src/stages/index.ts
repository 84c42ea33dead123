/** Importing this module registers every built-in stage kind (each file calls registerStageKind). */
export { DecisionCounter } from './decisions.js';
export { declaredFields, declaredHeaders, getStageKind, kindOf, stageKindNames } from './registry.js';
// built-in kinds (one import per kind file):
import './aa-fetch.js';
import './aa-report.js';
import './bsa-fetch.js';
import './workflow.js';
import './bureau-features.js';
