#!/bin/sh
# crate.sh N - print a Rust program of N generic structs with impls and
# derives, for rustc to compile in bench/run.sh section 12 (not a test).
n=${1:-20}
echo "use std::collections::HashMap;"
i=0
while [ "$i" -lt "$n" ]; do
	cat <<EOS
#[derive(Debug, Clone, PartialEq)]
pub struct S$i<T> { a: Vec<T>, b: HashMap<String, u64>, c: Option<Box<S$i<T>>> }
impl<T: Clone + std::fmt::Debug> S$i<T> {
    pub fn new(x: T) -> Self { let mut b = HashMap::new(); b.insert(format!("k{}", $i), $i); S$i { a: vec![x.clone(), x], b, c: None } }
    pub fn total(&self) -> u64 { self.b.values().map(|v| v * 3 + $i).filter(|v| v % 2 == 0).sum::<u64>() + self.a.len() as u64 }
    pub fn show(&self) -> String { format!("{:?}-{}", self.a, self.total()) }
}
pub fn f$i(n: u64) -> u64 { let s = S$i::new(n); let t = S$i::new(format!("{}", n)); s.total() + t.show().len() as u64 + (0..n).map(|x| x ^ $i).sum::<u64>() }
EOS
	i=$((i + 1))
done
printf 'fn main() { let mut t = 0u64;'
i=0
while [ "$i" -lt "$n" ]; do printf ' t += f%d(%d);' "$i" "$i"; i=$((i + 1)); done
echo ' println!("{}", t); }'
