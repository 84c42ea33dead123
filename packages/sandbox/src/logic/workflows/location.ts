/**
 * location_bre (decision spec 4.2): geocodes (latitude, longitude) to the nearest real pincode and applies
 * serviceability rules. Challenger (v2) uses a different negative-pincode band and a longer list of
 * non-serviced states, so ~10% of Indian locations change decision.
 */
import { unit } from '../hash.js';
import { nearestPincode } from '../geo.js';
import { Validator } from '../../validate.js';
import { INPUT_LOC, assertValid, decisionReason, runChain, unexpected, type WorkflowRun } from './common.js';

/** Farther than this from every known pincode = not a serviceable place in India. */
const MAX_KM = 50;

const NOT_SERVICED: Record<'v1' | 'v2', ReadonlySet<string>> = {
  v1: new Set(['Lakshadweep', 'Andaman and Nicobar Islands', 'Manipur']),
  v2: new Set(['Lakshadweep', 'Andaman and Nicobar Islands', 'Manipur', 'Nagaland', 'Mizoram']),
};

/** A pincode's position in the lender's (simulated) negative-pincode list, stable per pincode. */
function pincodeRisk(pincode: string): number {
  return unit(pincode, 'pincode.risk');
}

export const location: WorkflowRun = (input, ctx) => {
  const v = new Validator();
  v.str(input, 'lead_id', INPUT_LOC);
  const lat = v.num(input, 'latitude', INPUT_LOC);
  const lng = v.num(input, 'longitude', INPUT_LOC);
  assertValid(v);
  if (lat! < -90 || lat! > 90) unexpected(`latitude ${lat} is out of range: expected -90 to 90`);
  if (lng! < -180 || lng! > 180) unexpected(`longitude ${lng} is out of range: expected -180 to 180`);

  const place = nearestPincode(lat!, lng!, MAX_KM);
  const risk = place ? pincodeRisk(place.pincode) : 1;
  const pincodeOk = ctx.variant === 'v1' ? risk >= 0.06 : risk < 0.03 || risk >= 0.13;
  const chain = runChain([
    {
      engine: 'geocoding',
      rules: [
        { name: 'location within india', pass: place !== null },
        { name: 'pincode serviceable', pass: place !== null && pincodeOk },
        { name: 'state serviceable', pass: place !== null && !NOT_SERVICED[ctx.variant].has(place.state) },
      ],
    },
  ]);
  return {
    workflowName: 'location',
    outputData: {
      ecm: {},
      rules_output: {
        final_decision: {
          Decision: chain.approved ? 'Approve' : 'Reject',
          DecisionReason: decisionReason(chain),
          RulesEvaluation: chain.rulesEvaluation,
          version: ctx.variant,
          rule_engine_name: 'geocoding',
        },
      },
      features: {
        output_features: {
          geocoding: place
            ? { state: place.state, pincode: place.pincode, city: place.city }
            : { state: '', pincode: '', city: '' },
        },
        prev_output_features: {},
      },
    },
  };
};
