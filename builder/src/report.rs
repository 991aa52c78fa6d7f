//! Reads the resource report that `ptxas -v` prints: registers, static shared
//! memory, stack and spills of every entry function, so that xtask can gate
//! them against budgets.
//!
//! The report looks like this (one block per entry; `used N barriers` and
//! `N bytes smem` are printed only by some ptxas versions or when non-zero):
//!
//! ```text
//! ptxas info    : Compiling entry function 'sdpa_mma_d64' for 'sm_90a'
//! ptxas info    : Function properties for sdpa_mma_d64
//!     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//! ptxas info    : Used 147 registers, used 1 barriers, 34816 bytes smem, 400 bytes cmem[0]
//! ```
//!
//! Only `Compiling entry function` starts an entry. `Function properties for
//! X` blocks whose `X` is not the entry being compiled belong to non-inlined
//! device functions: they are kept apart, in [`Report::functions`].
//! Lines like `ptxas info    : (C7513) Potential Performance Loss: ... in the
//! function 'NAME'` (wherever they fall) are kept in [`Report::advisories`].

/// The resources ptxas reports for one entry function on one arch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryReport {
    /// The entry's PTX symbol.
    pub entry: String,
    /// The arch it was compiled for, e.g. `sm_90a`.
    pub arch: String,
    /// Registers per thread.
    pub registers: u32,
    /// Static shared memory (`N bytes smem`), 0 when not printed. Dynamic
    /// shared memory is chosen at launch and never appears here.
    pub shared_bytes: u32,
    /// Stack frame bytes.
    pub stack_bytes: u32,
    /// Bytes of register spill stores.
    pub spill_store_bytes: u32,
    /// Bytes of register spill loads.
    pub spill_load_bytes: u32,
    /// Named barriers used (`used N barriers`), 0 when not printed.
    pub barriers: u32,
}

/// The stack and spill figures of a non-inlined device function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionReport {
    /// The function's PTX symbol.
    pub name: String,
    /// Stack frame bytes.
    pub stack_bytes: u32,
    /// Bytes of register spill stores.
    pub spill_store_bytes: u32,
    /// Bytes of register spill loads.
    pub spill_load_bytes: u32,
}

/// A performance advisory ptxas printed, e.g. `ptxas info    : (C7513)
/// Potential Performance Loss: wgmma.mma_async instructions are serialized
/// due to ... in the function 'sdpa_wgmma_d64'`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Advisory {
    /// The message code, e.g. `C7513`.
    pub code: String,
    /// The function the message names, if it names one.
    pub function: Option<String>,
    /// The message after the code.
    pub text: String,
}

/// Everything [`parse_report`] reads from one `ptxas -v` run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// The entry functions, in the order ptxas compiled them.
    pub entries: Vec<EntryReport>,
    /// Device functions that ptxas kept as real calls, in report order.
    pub functions: Vec<FunctionReport>,
    /// "Potential Performance Loss" advisories, in report order.
    pub advisories: Vec<Advisory>,
}

/// Parses a `ptxas -v` report into its entries, in the order ptxas printed
/// them. Errors (with the line number) on a report that has no entry, on a
/// malformed figure, or on an entry that lacks its properties or its `Used`
/// line.
pub fn parse(report: &str) -> Result<Vec<EntryReport>, String> {
    parse_report(report).map(|r| r.entries)
}

/// A stack/spill line (`N bytes stack frame, N bytes spill stores, N bytes spill loads`).
type Frame = (u32, u32, u32);

/// An entry whose figures are still being collected.
struct Partial {
    entry: String,
    arch: String,
    frame: Option<Frame>,
    used: Option<Used>,
}

/// The figures of a `Used ...` line.
struct Used {
    registers: u32,
    barriers: u32,
    shared_bytes: u32,
}

/// Whose `Function properties` block is open: an entry (by index) or a device function.
enum Owner {
    Entry(usize),
    Function(String),
}

/// Like [`parse`], and also returns the device-function blocks.
pub fn parse_report(report: &str) -> Result<Report, String> {
    let mut entries: Vec<Partial> = Vec::new();
    let mut functions = Vec::new();
    let mut advisories = Vec::new();
    // The entry being compiled, until its `Used` line is read.
    let mut current: Option<usize> = None;
    // The owner of a `Function properties` line whose frame line comes next.
    let mut open: Option<(usize, Owner)> = None;

    for (index, raw) in report.lines().enumerate() {
        let n = index + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some((opened_at, owner)) = open.take() {
            let frame = parse_frame(line).ok_or_else(|| {
                format!("line {n}: expected 'N bytes stack frame, N bytes spill stores, N bytes spill loads' after line {opened_at}, found {line:?}")
            })??;
            match owner {
                Owner::Entry(i) => entries[i].frame = Some(frame),
                Owner::Function(name) => functions.push(FunctionReport {
                    name,
                    stack_bytes: frame.0,
                    spill_store_bytes: frame.1,
                    spill_load_bytes: frame.2,
                }),
            }
            continue;
        }
        let Some(msg) = info_message(line) else {
            continue;
        };
        if let Some(advisory) = parse_advisory(msg) {
            advisories.push(advisory);
        } else if let Some(rest) = msg.strip_prefix("Compiling entry function ") {
            let (entry, arch) = parse_compiling(rest).ok_or_else(|| {
                format!("line {n}: expected \"Compiling entry function 'NAME' for 'ARCH'\", found {line:?}")
            })?;
            if entries.iter().any(|p| p.entry == entry && p.arch == arch) {
                return Err(format!("line {n}: entry '{entry}' for '{arch}' is reported twice"));
            }
            entries.push(Partial { entry, arch, frame: None, used: None });
            current = Some(entries.len() - 1);
        } else if msg.starts_with("Compiling ") {
            // A non-entry function (relocatable builds): its figures are not an entry's.
            current = None;
        } else if let Some(rest) = msg.strip_prefix("Function properties for ") {
            let name = rest.trim().trim_matches('\'');
            let owner = match current {
                Some(i) if entries[i].entry == name && entries[i].frame.is_none() => Owner::Entry(i),
                _ => Owner::Function(name.to_string()),
            };
            open = Some((n, owner));
        } else if msg.starts_with("Used ")
            && let Some(i) = current.take()
        {
            entries[i].used = Some(parse_used(msg).map_err(|e| format!("line {n}: {e} in {line:?}"))?);
        }
    }
    if let Some((opened_at, _)) = open {
        return Err(format!("line {opened_at}: 'Function properties' block is cut off (no stack frame line follows)"));
    }
    if entries.is_empty() {
        return Err("no 'Compiling entry function' line: not a `ptxas -v` report, or the PTX has no entry".into());
    }
    let entries = entries.into_iter().map(finish).collect::<Result<_, _>>()?;
    Ok(Report { entries, functions, advisories })
}

/// `(CNNNN) Potential Performance Loss: ... in the function 'NAME'`; `None`
/// for any other message.
fn parse_advisory(msg: &str) -> Option<Advisory> {
    let (code, text) = msg.strip_prefix('(')?.split_once(')')?;
    let numbered = code.strip_prefix('C').is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let text = text.trim();
    if !numbered || !text.starts_with("Potential Performance Loss") {
        return None;
    }
    let function =
        text.rsplit_once("in the function '").and_then(|(_, name)| name.strip_suffix('\'')).map(str::to_string);
    Some(Advisory { code: code.to_string(), function, text: text.to_string() })
}

/// Checks that an entry got both its frame line and its `Used` line.
fn finish(p: Partial) -> Result<EntryReport, String> {
    let Some((stack_bytes, spill_store_bytes, spill_load_bytes)) = p.frame else {
        return Err(format!("entry '{}' for '{}': no 'Function properties' block", p.entry, p.arch));
    };
    let Some(used) = p.used else {
        return Err(format!("entry '{}' for '{}': no 'Used N registers' line", p.entry, p.arch));
    };
    Ok(EntryReport {
        entry: p.entry,
        arch: p.arch,
        registers: used.registers,
        shared_bytes: used.shared_bytes,
        stack_bytes,
        spill_store_bytes,
        spill_load_bytes,
        barriers: used.barriers,
    })
}

/// The message of a `ptxas info    : MESSAGE` line; `None` for other lines.
fn info_message(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("ptxas")?.trim_start().strip_prefix("info")?;
    Some(rest.trim_start().strip_prefix(':')?.trim())
}

/// `'NAME' for 'ARCH'` -> (NAME, ARCH).
fn parse_compiling(rest: &str) -> Option<(String, String)> {
    let rest = rest.trim().strip_prefix('\'')?;
    let (entry, rest) = rest.split_once('\'')?;
    let arch = rest.trim().strip_prefix("for")?.trim().strip_prefix('\'')?.strip_suffix('\'')?;
    let ok = |s: &str| !s.is_empty() && !s.contains(char::is_whitespace);
    (ok(entry) && ok(arch)).then(|| (entry.to_string(), arch.to_string()))
}

/// A frame line; `None` if the line is not one, `Some(Err)` if a figure is malformed.
fn parse_frame(line: &str) -> Option<Result<Frame, String>> {
    let mut figures: [Option<Result<u32, String>>; 3] = [const { None }; 3];
    let keys = ["bytes stack frame", "bytes spill stores", "bytes spill loads"];
    for item in line.split(',') {
        let item = item.trim();
        let (num, key) = item.split_once(' ')?;
        let slot = keys.iter().position(|k| *k == key.trim())?;
        figures[slot] = Some(number(num));
    }
    let [Some(stack), Some(stores), Some(loads)] = figures else {
        return None;
    };
    Some(stack.and_then(|s| Ok((s, stores?, loads?))))
}

/// The figures of `Used N registers, used N barriers, N bytes smem, ...`;
/// items other than registers, barriers and smem (cmem, textures,
/// cumulative stack size) are skipped.
fn parse_used(msg: &str) -> Result<Used, String> {
    let mut used = Used { registers: u32::MAX, barriers: 0, shared_bytes: 0 };
    let mut saw_registers = false;
    for item in msg.split(',') {
        let words: Vec<&str> = item.split_whitespace().collect();
        match words.as_slice() {
            ["Used", n, "registers"] => {
                used.registers = number(n)?;
                saw_registers = true;
            }
            ["used", n, "barriers"] => used.barriers = number(n)?,
            [n, "bytes", "smem"] => used.shared_bytes = number(n)?,
            _ => {}
        }
    }
    if saw_registers { Ok(used) } else { Err("no 'Used N registers' figure".into()) }
}

/// A decimal `u32`, or an error that quotes it.
fn number(s: &str) -> Result<u32, String> {
    s.trim().parse().map_err(|_| format!("{s:?} is not a byte or register count"))
}
