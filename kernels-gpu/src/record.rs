//! The record set: the shapes (`B,H,S,D[,causal]`) that `sdpa bench`,
//! `sdpa plan` and `cargo xtask bench` take when none are given, and so
//! every bench record and the speed gate's baselines: the two short
//! mission shapes, then the long-sequence targets; and how a record writes
//! a shape ([`ShapeLabel`]) and which shapes it treats as decoding
//! ([`DECODE_MAX_QUERIES`]). The host and xtask both read them here, the
//! one crate they share.

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

/// The most query tokens per sequence of a decoding problem: the
/// recommendation treats such problems (with enough keys) as decoding, and
/// the bench records report their K+V read rate, which bounds their time,
/// rather than TFLOP/s.
pub const DECODE_MAX_QUERIES: u32 = 16;

/// A shape as the bench, its records and `scripts/peers.py` write it:
/// `B,Hq[:Hkv],Sq[:Skv],D[,causal]`, each pair in its short form where its
/// two sides are equal (`2,8,256,64,causal`, `64,32:8,1:8192,128`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShapeLabel {
    /// Batch.
    pub batch: u64,
    /// Query heads and key/value heads.
    pub heads: (u64, u64),
    /// Query and key lengths.
    pub seq: (u64, u64),
    /// Head dimension.
    pub head_dim: u64,
    /// Causal masking.
    pub causal: bool,
}

impl core::fmt::Display for ShapeLabel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let pair = |f: &mut core::fmt::Formatter<'_>, (a, b): (u64, u64)| {
            if a == b { write!(f, "{a}") } else { write!(f, "{a}:{b}") }
        };
        write!(f, "{},", self.batch)?;
        pair(f, self.heads)?;
        write!(f, ",")?;
        pair(f, self.seq)?;
        write!(f, ",{}", self.head_dim)?;
        if self.causal { write!(f, ",causal") } else { Ok(()) }
    }
}
