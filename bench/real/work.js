// work.js - a node workload for bench/run.sh section 12 (not a test):
// string building, maps and sorting for N rounds, JIT-compiled.
'use strict';
function round(seed) {
	const m = new Map();
	const keys = [];
	let sum = 0;
	for (let i = 0; i < 2000; i++) {
		const k = (((seed * 7919 + i) * 2654435761) >>> 0).toString(16);
		m.set(k, (m.get(k) || 0) + i);
		keys.push(k);
		sum += k.charCodeAt(0);
	}
	keys.sort();
	for (let i = 0; i < 100; i++)
		sum += m.get(keys[i]);
	return sum;
}
const n = parseInt(process.argv[2], 10);
let total = 0;
for (let i = 0; i < n; i++)
	total += round(i);
console.log(total);
