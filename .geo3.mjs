const { ROWS } = await import('./dist/sandbox/geo/pincode-table.js');
const which = process.argv[2];
const c0 = process.cpuUsage(); const t0 = performance.now();
let sum = 0;
if (which === 'split') {
  const parts = ROWS.split(';'); let pin = 0;
  for (let i = 0; i < parts.length; i++) { const [d, la, ln, di] = parts[i].split(','); pin += Number(d); sum += Number(la) + Number(ln) + Number(di) + pin; }
} else if (which === 'chars') {
  let at = 0; const text = ROWS; const n = 18726;
  const field = () => { let v = 0; for (let c = text.charCodeAt(at); c >= 48 && c <= 57; c = text.charCodeAt(++at)) v = v * 10 + (c - 48); at++; return v; };
  for (let i = 0; i < n; i++) sum += field() + field() + field() + field();
} else if (which === 'index') {
  const text = ROWS; let at = 0; let pin = 0;
  while (at < text.length) { let e = text.indexOf(';', at); if (e < 0) e = text.length; const a = text.indexOf(',', at), b = text.indexOf(',', a + 1), c = text.indexOf(',', b + 1);
    pin += +text.slice(at, a); sum += +text.slice(a + 1, b) + +text.slice(b + 1, c) + +text.slice(c + 1, e) + pin; at = e + 1; }
} else if (which === 'json') {
  const arr = JSON.parse('[' + ROWS.replaceAll(';', ',') + ']'); for (let i = 0; i < arr.length; i++) sum += arr[i];
}
const c = process.cpuUsage(c0);
console.log(which, (performance.now() - t0).toFixed(1), 'ms wall', ((c.user + c.system) / 1000).toFixed(1), 'ms cpu', sum > 0);
