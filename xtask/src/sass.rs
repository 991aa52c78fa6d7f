//! `cargo xtask sass ENTRY [--arch ARCH] [--full]`: the SASS ptxas made of
//! one kernel entry, with what matters when reading a loop without a GPU:
//! the instruction count, every loop (a backward branch: its first and
//! last address and its length in instructions) and the opcode mix of the
//! longest loops. The whole listing goes to
//! `target/kernels/<arch>/<entry>.sass` (and to stdout with `--full`).
//!
//! The disassembler is NVIDIA's `nvdisasm`: `$SDPA_NVDISASM`, then the pip
//! wheel in `target/cuda-tools/nvdisasm` (installed on first use), then
//! `PATH`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use kernel_builder::{on_path, tools_dir};

use crate::util::{self, Args, Result};

/// The pip wheel that ships `nvdisasm` (reads the cubins of ptxas 13.0).
const NVDISASM_PIP_PACKAGE: &str = "nvidia-cuda-nvdisasm==13.5.37";

/// Loops with at least this many instructions get an opcode mix.
const MIX_MIN_LOOP: usize = 50;

/// Runs the command.
pub fn run(args: &[String]) -> Result<()> {
    let mut args = Args::new("sass", args);
    let arch = crate::ptx::arch(&args.value("--arch")?.unwrap_or_else(|| "sm_90a".into()))?;
    let full = args.flag("--full");
    let entry = args.positional().ok_or("usage: cargo xtask sass ENTRY [--arch ARCH] [--full]")?;
    args.finish()?;
    let ws = util::workspace();
    let ptxas = crate::setup::ensure_ptxas(&ws)?;
    let nvdisasm = ensure_nvdisasm(&ws)?;
    let built = crate::ptx::build(&ws, &ptxas, arch)?;
    let listing = util::output(Command::new(&nvdisasm).arg("-c").arg(&built.cubin))?;
    let text = entry_text(&listing, &entry).ok_or_else(|| {
        let entries: Vec<&str> = listing.lines().filter_map(|l| l.strip_prefix(".text.")?.strip_suffix(':')).collect();
        format!("no entry `{entry}` in the {} cubin (it has: {})", arch.name, entries.join(", "))
    })?;
    let out = built.cubin.with_file_name(format!("{entry}.sass"));
    std::fs::write(&out, text).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    if full {
        println!("{text}");
    }
    let code = parse(text);
    println!("{entry} ({}): {} instructions; listing in {}", arch.name, code.len(), out.display());
    let loops = loops(&code);
    for l in &loops {
        println!("loop {:#06x}..{:#06x}: {} instructions", l.start, l.end, l.len);
    }
    for l in loops.iter().filter(|l| l.len >= MIX_MIN_LOOP) {
        let mix = opcode_mix(code.iter().filter(|i| (l.start..=l.end).contains(&i.addr)));
        let top: Vec<String> = mix.iter().take(16).map(|(op, n)| format!("{op} {n}")).collect();
        println!("opcodes of loop {:#06x}..{:#06x}: {}", l.start, l.end, top.join(", "));
    }
    Ok(())
}

/// Returns the nvdisasm to use, installing the pip wheel first if none is found.
fn ensure_nvdisasm(ws: &Path) -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("SDPA_NVDISASM") {
        let p = PathBuf::from(p);
        return if p.is_file() { Ok(p) } else { Err(format!("SDPA_NVDISASM={} is not a file", p.display())) };
    }
    // Its own directory: a second wheel in ptxas's would replace `nvidia/`.
    let dir = tools_dir(ws).join("nvdisasm");
    let installed = dir.join("nvidia/cu13/bin/nvdisasm");
    if installed.is_file() {
        return Ok(installed);
    }
    if let Some(p) = on_path("nvdisasm") {
        return Ok(p);
    }
    eprintln!("nvdisasm not found; installing {NVDISASM_PIP_PACKAGE} into {}", dir.display());
    crate::setup::pip_install(&dir, NVDISASM_PIP_PACKAGE)?;
    if installed.is_file() {
        Ok(installed)
    } else {
        Err(format!("pip installed {NVDISASM_PIP_PACKAGE} but no nvdisasm is at {}", installed.display()))
    }
}

/// The text of one entry's section in an `nvdisasm -c` listing.
fn entry_text<'a>(listing: &'a str, entry: &str) -> Option<&'a str> {
    let head = format!(".text.{entry}:");
    let start = listing.find(&head)?;
    let rest = &listing[start..];
    let end = rest.find("\n//----").unwrap_or(rest.len());
    Some(&rest[..end])
}

/// One SASS instruction.
#[derive(Debug, PartialEq)]
struct Instruction {
    /// Its address (byte offset in the entry).
    addr: u32,
    /// The opcode without modifiers (`HMMA` of `HMMA.16816.F32`).
    opcode: String,
    /// The address it branches to, if it branches to a label.
    target: Option<u32>,
}

/// The address of an instruction line (`/*01a0*/ ...`) and the rest of it.
fn address(line: &str) -> Option<(u32, &str)> {
    let (addr, rest) = line.trim().strip_prefix("/*")?.split_once("*/")?;
    Some((u32::from_str_radix(addr, 16).ok()?, rest))
}

/// The instructions of an entry's listing, branch labels (`.L_x_N:`)
/// resolved to the address of the instruction after them.
fn parse(text: &str) -> Vec<Instruction> {
    let mut labels = BTreeMap::new();
    let mut pending: Vec<&str> = Vec::new();
    for line in text.lines() {
        if let Some(label) = line.trim().strip_suffix(':').filter(|l| l.starts_with(".L_")) {
            pending.push(label);
        } else if let Some((addr, _)) = address(line) {
            labels.extend(pending.drain(..).map(|label| (label, addr)));
        }
    }
    let mut out = Vec::new();
    for (addr, rest) in text.lines().filter_map(address) {
        // The first word that is not a predicate (`@P0`, `@!PT`) is the opcode.
        let Some(op) = rest.split_whitespace().find(|w| !w.starts_with('@')) else { continue };
        let opcode = op.split('.').next().unwrap_or(op).trim_end_matches(';').to_string();
        // A branch names its label as `(.L_x_N).
        let label = rest.split_once("`(").and_then(|(_, t)| t.split_once(')')).map(|(l, _)| l);
        let target = label.and_then(|l| labels.get(l).copied());
        out.push(Instruction { addr, opcode, target });
    }
    out
}

/// A loop: a backward branch at `end` to `start` with no `EXIT` between.
/// (A backward branch over an `EXIT` is how ptxas returns from code it moved
/// out of line, past the end of the kernel, such as a slow path; a branch
/// to itself is the trap after the last `EXIT`. Neither is counted.)
#[derive(Debug, PartialEq)]
struct Loop {
    start: u32,
    end: u32,
    /// Instructions from `start` to `end`, both included.
    len: usize,
}

/// Every loop of `code`, longest first.
fn loops(code: &[Instruction]) -> Vec<Loop> {
    let mut out: Vec<Loop> = code
        .iter()
        .filter_map(|i| {
            let start = i.target.filter(|&t| t < i.addr)?;
            let body = || code.iter().filter(move |j| (start..=i.addr).contains(&j.addr));
            if body().any(|j| j.opcode == "EXIT") {
                return None;
            }
            Some(Loop { start, end: i.addr, len: body().count() })
        })
        .collect();
    out.sort_by(|a, b| b.len.cmp(&a.len).then(a.start.cmp(&b.start)));
    out
}

/// How much longer a packed twin's step loop may be than its dense
/// kernel's: 2%. The twins' steps are the same algorithm; a longer loop is
/// values `ptxas` could not keep warp-uniform (the packed twins once ran
/// 8% more instructions a step, 20% more time: docs/design.md).
pub const TWIN_STEP_SLACK: f64 = 0.02;

/// An entry's step loops: the innermost loops of at least
/// [`MIX_MIN_LOOP`] instructions that hold a `wgmma` (`HGMMA`), as lengths,
/// shortest first.
fn step_loops(code: &[Instruction]) -> Vec<usize> {
    let long: Vec<Loop> = loops(code).into_iter().filter(|l| l.len >= MIX_MIN_LOOP).collect();
    let inside = |outer: &Loop, inner: &Loop| inner != outer && outer.start <= inner.start && inner.end <= outer.end;
    let mut out: Vec<usize> = long
        .iter()
        .filter(|l| !long.iter().any(|m| inside(l, m)))
        .filter(|l| code.iter().any(|i| (l.start..=l.end).contains(&i.addr) && i.opcode == "HGMMA"))
        .map(|l| l.len)
        .collect();
    out.sort_unstable();
    out
}

/// The pairs `(dense entry, packed twin)` whose step loops must match:
/// each kernel's plain and score entries and their packed twins.
pub fn twin_pairs() -> Vec<(&'static str, &'static str)> {
    use kernels_gpu::kernels::{KERNELS, ScoreForm};
    let forms = [ScoreForm::Plain, ScoreForm::Window, ScoreForm::Softcap];
    KERNELS
        .iter()
        .flat_map(|k| forms.into_iter().filter_map(move |f| Some((k.entry_for(false, f)?, k.entry_for(true, f)?))))
        .collect()
}

/// The twin pairs of `listing` (an `nvdisasm -c` listing of a whole cubin)
/// whose packed step loops are longer than their dense kernel's by more
/// than [`TWIN_STEP_SLACK`], or differ in number, each as one line.
pub fn twin_step_violations(listing: &str, pairs: &[(&str, &str)]) -> Vec<String> {
    let steps = |entry: &str| entry_text(listing, entry).map(|t| step_loops(&parse(t)));
    let mut out = Vec::new();
    for &(dense, packed) in pairs {
        let (Some(d), Some(p)) = (steps(dense), steps(packed)) else {
            out.push(format!("{packed}: no SASS for it or for {dense} in the cubin"));
            continue;
        };
        let longer =
            d.len() != p.len() || d.iter().zip(&p).any(|(&d, &p)| p as f64 > d as f64 * (1.0 + TWIN_STEP_SLACK));
        if longer {
            out.push(format!(
                "{packed}: step loops {p:?} instructions against {dense}'s {d:?} (more than {:.0}% longer: values not warp-uniform? see docs/design.md)",
                TWIN_STEP_SLACK * 100.0
            ));
        }
    }
    out
}

/// Disassembles `cubin` (all entries) with the workspace's `nvdisasm`.
pub fn disassemble(ws: &Path, cubin: &Path) -> Result<String> {
    let nvdisasm = ensure_nvdisasm(ws)?;
    util::output(Command::new(&nvdisasm).arg("-c").arg(cubin))
}

/// Opcode counts, most frequent first.
fn opcode_mix<'a>(code: impl Iterator<Item = &'a Instruction>) -> Vec<(String, usize)> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for i in code {
        *counts.entry(i.opcode.as_str()).or_default() += 1;
    }
    let mut mix: Vec<(String, usize)> = counts.into_iter().map(|(op, n)| (op.to_string(), n)).collect();
    mix.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    mix
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTING: &str = "\
//--------------------- .text.other --------------------------
.text.other:
        /*0000*/                   EXIT ;
//--------------------- .text.k --------------------------
.text.k:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
.L_x_1:
        /*0010*/                   HMMA.16816.F32 R4, R8, R10, R4 ;
        /*0020*/              @!P0 HMMA.16816.F32 R4, R8, R12, R4 ;
        /*0030*/                   FMNMX R2, R4, R5, !PT ;
        /*0040*/               @P1 BRA `(.L_x_1) ;
        /*0050*/                   BRA `(.L_x_2) ;
.L_x_2:
        /*0060*/                   EXIT ;
        /*0070*/                   BRA `(.L_x_1) ;
.L_x_3:
        /*0080*/                   BRA `(.L_x_3) ;
";

    #[test]
    fn an_entry_is_its_section_only() {
        let text = entry_text(LISTING, "k").unwrap();
        assert!(text.starts_with(".text.k:") && text.contains("FMNMX") && !text.contains(".text.other:"));
        assert!(entry_text(LISTING, "missing").is_none());
    }

    #[test]
    fn instructions_opcodes_and_branch_targets() {
        let code = parse(entry_text(LISTING, "k").unwrap());
        assert_eq!(code.len(), 9);
        assert_eq!(code[2], Instruction { addr: 0x20, opcode: "HMMA".into(), target: None });
        assert_eq!(code[4].target, Some(0x10));
        assert_eq!(code[5].target, Some(0x60));
    }

    #[test]
    fn backward_branches_are_loops_and_the_mix_counts_opcodes() {
        let code = parse(entry_text(LISTING, "k").unwrap());
        assert_eq!(loops(&code), vec![Loop { start: 0x10, end: 0x40, len: 4 }]);
        let mix = opcode_mix(code.iter().filter(|i| (0x10..=0x40).contains(&i.addr)));
        assert_eq!(mix[0], ("HMMA".to_string(), 2));
        assert_eq!(mix.len(), 3);
    }

    /// A listing of two entries whose one step loop (`HGMMA` inside a
    /// loop of `len` instructions, inside an outer loop) is `dense` and
    /// `packed` instructions long.
    fn twins(dense: usize, packed: usize) -> String {
        let entry = |name: &str, len: usize| {
            let mut text =
                format!(".text.{name}:\n.L_x_0:\n        /*0000*/                   MOV R0, R1 ;\n.L_x_1:\n");
            let mut addr = 0x10;
            text += &format!(
                "        /*{addr:04x}*/                   HGMMA.64x64x32.F32.E4M3.E4M3 R0, gdesc[UR4], RZ ;\n"
            );
            for _ in 0..len - 2 {
                addr += 0x10;
                text += &format!("        /*{addr:04x}*/                   FADD R2, R2, R3 ;\n");
            }
            addr += 0x10;
            text += &format!("        /*{addr:04x}*/               @P0 BRA `(.L_x_1) ;\n");
            addr += 0x10;
            text += &format!("        /*{addr:04x}*/               @P1 BRA `(.L_x_0) ;\n");
            addr += 0x10;
            text += &format!("        /*{addr:04x}*/                   EXIT ;\n//-----\n");
            text
        };
        entry("dense", dense) + &entry("packed", packed)
    }

    #[test]
    fn a_packed_step_loop_longer_than_its_dense_one_is_a_violation() {
        let pairs = [("dense", "packed")];
        // The inner loop only: the outer one holds it.
        assert_eq!(step_loops(&parse(entry_text(&twins(540, 540), "dense").unwrap())), vec![540]);
        assert!(twin_step_violations(&twins(540, 539), &pairs).is_empty());
        assert!(twin_step_violations(&twins(540, 550), &pairs).is_empty());
        let v = twin_step_violations(&twins(540, 583), &pairs);
        assert!(v.len() == 1 && v[0].contains("[583]") && v[0].contains("[540]"), "{v:?}");
        assert!(twin_step_violations(&twins(540, 540), &[("dense", "missing")])[0].contains("no SASS"));
    }

    #[test]
    fn every_packed_twin_has_a_dense_pair() {
        let pairs = twin_pairs();
        assert_eq!(pairs.len(), 24, "{pairs:?}");
        assert!(pairs.iter().all(|(d, p)| p.contains("packed") && !d.contains("packed")));
    }
}
