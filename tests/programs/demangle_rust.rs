// demangle_rust.rs - a hot Rust function for the demangler, built twice:
//   rustc -O -g -o demangle_rust demangle_rust.rs             (legacy: _ZN...17h<hash>E)
//   rustc -O -g -C symbol-mangling-version=v0 -o ... ...rs    (v0: _RNv...)
// Both show demangle_rust::work::hot_rust_loop on every stack.
mod work {
    #[inline(never)]
    pub fn hot_rust_loop(n: u64) -> u64 {
        let mut x: u64 = 1;
        for i in 0..n { x = x.wrapping_mul(6364136223846793005).wrapping_add(i); x = std::hint::black_box(x); }
        x
    }
}
fn main() {
    let end = std::time::Instant::now() + std::time::Duration::from_millis(500);
    let mut t = 0u64;
    while std::time::Instant::now() < end { t = t.wrapping_add(work::hot_rust_loop(1_000_000)); }
    println!("{}", t & 1);
}
