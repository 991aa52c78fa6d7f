//! The record set: the shapes (`B,H,S,D[,causal]`) that `sdpa bench`,
//! `sdpa plan` and `cargo xtask bench` take when none are given, and so
//! every bench record and the speed gate's baselines: the two short
//! mission shapes, then the long-sequence targets. The host and xtask both
//! read it here, the one crate they share.

/// The record set's shapes, short ones first.
pub const SHAPES: [&str; 8] = [
    "2,8,256,64",
    "1,8,512,64",
    "4,16,2048,64",
    "2,16,8192,64",
    "2,16,8192,64,causal",
    "4,16,4096,128",
    "1,16,16384,128",
    "1,16,16384,128,causal",
];
