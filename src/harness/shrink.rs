//! Minimization: shrinks a failing run while the same property still fails.
//!
//! A run is (knobs, seed, choices). The minimizer alternates two moves until neither helps:
//! - **structure**: drop one client, one operation, one fault kind, one server, or one unit
//!   of the fault budget. The candidate is first replayed with the old choices (remapped
//!   for a dropped client; out-of-range choices are normalized by replay); if that passes,
//!   a bounded search over seeds of the smaller scenario looks for another failing run;
//! - **schedule**: delta debugging (ddmin) on the explicit choice sequence, keeping the
//!   shortest prefix of choices that still fails (the rest of the run takes the first
//!   runnable client and no faults).
//!
//! A candidate counts only if it fails with the same
//! [`Violation::property`](crate::verdict::Violation::property). The result
//! is minimal in a checkable sense ([`is_minimal`]): removing any single client, operation
//! or fault (and any single choice of the schedule) makes the run pass, both when its
//! choices are replayed and for every seed of the bounded search. Everything is a pure
//! function of its inputs; the work is bounded by a probe count, never by wall-clock time.

use crate::harness::probed::Probed;
use crate::harness::records::RunReport;
use crate::harness::sweep::run_seed;
use crate::harness::target::Target;
use crate::scenario::FaultKind;
use crate::sim::SimConfig;
use crate::verdict::Verdict;

pub use crate::harness::records::{active_clients, faults_in, total_ops, ShrinkStats};

/// How hard the minimizer tries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShrinkLimits {
    /// Most runs (probes) in all.
    pub max_probes: u64,
    /// Seeds tried for a smaller scenario when the old choices no longer fail it.
    pub seeds: u64,
    /// Wall-clock time after which no more probes are made (a time budget's end): the
    /// smallest failing run found by then is the result.
    pub deadline: Option<std::time::Instant>,
}

impl Default for ShrinkLimits {
    fn default() -> Self {
        ShrinkLimits {
            max_probes: 20_000,
            seeds: 64,
            deadline: None,
        }
    }
}

/// One run to try: the knobs, the seed, and the explicit choices (`None`: the strategy's
/// own walk from the seed).
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The knobs.
    pub config: SimConfig,
    /// The seed.
    pub seed: u64,
    /// The explicit choices.
    pub choices: Option<Vec<u32>>,
}

/// A single-step reduction of a run, named for people.
#[derive(Clone, Debug, PartialEq)]
pub struct Reduction {
    /// What was removed, e.g. `client C1`, `operation 2 of C0`, `fault kind evict`.
    pub what: String,
    /// The smaller run, with the old choices remapped to it.
    pub candidate: Candidate,
}

/// The config with every client's operation list spelled out.
fn explicit(config: &SimConfig) -> Vec<Vec<usize>> {
    (0..config.clients).map(|c| config.ops_of(c)).collect()
}

/// Every single-step structural reduction of `c`: one client, one operation, one fault
/// kind, one server, one unit of fault budget. The old choices are remapped where a client
/// disappears (its choices dropped, later indices shifted).
pub fn reductions(c: &Candidate) -> Vec<Reduction> {
    let mut out = Vec::new();
    let cfg = &c.config;
    let lists = explicit(cfg);
    let choices = c.choices.clone().unwrap_or_default();
    // Clients, last first: dropped entirely (later clients renumbered), or left idle.
    for client in (0..cfg.clients).rev() {
        let idle = lists[client].is_empty();
        let mut fewer = cfg.clone();
        fewer.clients -= 1;
        let mut l = lists.clone();
        l.remove(client);
        fewer.client_ops = Some(l);
        let remapped: Vec<u32> = choices
            .iter()
            .filter(|&&x| x != client as u32)
            .map(|&x| if x > client as u32 { x - 1 } else { x })
            .collect();
        out.push(Reduction {
            what: format!("client C{client}"),
            candidate: Candidate {
                config: fewer,
                seed: c.seed,
                choices: Some(remapped),
            },
        });
        if !idle && client + 1 < cfg.clients {
            let mut emptied = cfg.clone();
            let mut l = lists.clone();
            l[client].clear();
            emptied.client_ops = Some(l);
            out.push(Reduction {
                what: format!("client C{client} (left idle)"),
                candidate: Candidate {
                    config: emptied,
                    seed: c.seed,
                    choices: Some(
                        choices
                            .iter()
                            .copied()
                            .filter(|&x| x != client as u32)
                            .collect(),
                    ),
                },
            });
        }
    }
    // Operations, last first.
    for client in 0..cfg.clients {
        for (pos, &index) in lists[client].iter().enumerate().rev() {
            let mut fewer = cfg.clone();
            let mut l = lists.clone();
            l[client].remove(pos);
            fewer.client_ops = Some(l);
            out.push(Reduction {
                what: format!("operation {index} of C{client}"),
                candidate: Candidate {
                    config: fewer,
                    seed: c.seed,
                    choices: Some(choices.clone()),
                },
            });
        }
    }
    // Fault kinds.
    for &kind in cfg.faults.kinds() {
        let mut fewer = cfg.clone();
        let kinds: Vec<FaultKind> = cfg
            .faults
            .kinds()
            .iter()
            .copied()
            .filter(|&k| k != kind)
            .collect();
        fewer.faults = crate::scenario::FaultSet::of(&kinds);
        if kind == FaultKind::Lru {
            fewer.memory_limit = None;
        }
        if fewer.faults.is_empty() {
            fewer.fault_budget = 0;
        }
        out.push(Reduction {
            what: format!("fault kind {}", kind.name()),
            candidate: Candidate {
                config: fewer,
                seed: c.seed,
                choices: Some(choices.clone()),
            },
        });
    }
    // One fault fewer.
    if cfg.fault_budget > 0 && !cfg.faults.is_empty() {
        let mut fewer = cfg.clone();
        fewer.fault_budget -= 1;
        out.push(Reduction {
            what: "one fault (budget)".to_string(),
            candidate: Candidate {
                config: fewer,
                seed: c.seed,
                choices: Some(choices.clone()),
            },
        });
    }
    // One server fewer.
    if cfg.shards > 1 && !cfg.faults.has(FaultKind::ShardFail) {
        let mut fewer = cfg.clone();
        fewer.shards -= 1;
        out.push(Reduction {
            what: "one server".to_string(),
            candidate: Candidate {
                config: fewer,
                seed: c.seed,
                choices: Some(choices),
            },
        });
    }
    out
}

/// The size a reduction must decrease (clients, operations, fault kinds, fault budget,
/// servers), so that minimization terminates.
fn size(cfg: &SimConfig) -> usize {
    cfg.clients
        + total_ops(cfg)
        + cfg.faults.kinds().len()
        + if cfg.faults.is_empty() {
            0
        } else {
            cfg.fault_budget as usize
        }
        + cfg.shards
}

/// The probe: runs candidates and tells whether the property still fails.
struct Prober<'t> {
    target: &'t dyn Target,
    property: String,
    probes: u64,
    limits: ShrinkLimits,
    /// The outcomes of the runs probed so far (this target's: a repeat is not run again).
    probed: &'t mut Probed,
}

impl Prober<'_> {
    fn exhausted(&self) -> bool {
        self.probes >= self.limits.max_probes
            || self
                .limits
                .deadline
                .is_some_and(|d| std::time::Instant::now() >= d)
    }

    fn fails(&mut self, config: &SimConfig, seed: u64, choices: Option<&[u32]>) -> bool {
        if self.exhausted() {
            return false;
        }
        self.probes += 1;
        let target = self.target;
        self.probed
            .violated(config, seed, choices, || {
                target.verdict(config, seed, choices)
            })
            .is_some_and(|p| p == self.property)
    }

    /// [`Prober::fails`] of the run from `seed` by the strategy's own walk, and the
    /// choices it made when it was run now (not answered from memory).
    fn fails_from(&mut self, config: &SimConfig, seed: u64) -> (bool, Option<Vec<u32>>) {
        if self.exhausted() {
            return (false, None);
        }
        self.probes += 1;
        let target = self.target;
        let mut made = None;
        let fails = self
            .probed
            .violated(config, seed, None, || {
                let (verdict, choices) = target.verdict_and_choices(config, seed);
                made = Some(choices);
                verdict
            })
            .is_some_and(|p| p == self.property);
        (fails, made)
    }

    /// The candidate replayed, else the first failing seed of the bounded search (with the
    /// choices that run made).
    fn reproduce(&mut self, c: &Candidate) -> Option<Candidate> {
        if self.fails(&c.config, c.seed, c.choices.as_deref()) {
            return Some(c.clone());
        }
        for seed in seeds(c.seed, self.limits.seeds) {
            if let (true, made) = self.fails_from(&c.config, seed) {
                // The probe's own choices, unless it was answered from memory.
                let choices =
                    made.unwrap_or_else(|| self.target.verdict_and_choices(&c.config, seed).1);
                return Some(Candidate {
                    config: c.config.clone(),
                    seed,
                    choices: Some(choices),
                });
            }
        }
        None
    }

    /// Delta debugging on the explicit choices (Zeller's ddmin, complements only): the
    /// result is 1-minimal.
    fn ddmin(&mut self, c: &Candidate) -> Candidate {
        let mut list = c.choices.clone().unwrap_or_default();
        if self.fails(&c.config, c.seed, Some(&[])) {
            list.clear();
        }
        let mut n = 2usize;
        while list.len() >= 2 && !self.exhausted() {
            let chunk = list.len().div_ceil(n);
            let mut reduced = false;
            let mut start = 0;
            while start < list.len() {
                let end = (start + chunk).min(list.len());
                let mut cand = list[..start].to_vec();
                cand.extend_from_slice(&list[end..]);
                if self.fails(&c.config, c.seed, Some(&cand)) {
                    list = cand;
                    n = (n - 1).max(2);
                    reduced = true;
                    break;
                }
                start = end;
            }
            if !reduced {
                if n >= list.len() {
                    break;
                }
                n = (n * 2).min(list.len());
            }
        }
        if list.len() == 1 && self.fails(&c.config, c.seed, Some(&[])) {
            list.clear();
        }
        Candidate {
            config: c.config.clone(),
            seed: c.seed,
            choices: Some(list),
        }
    }
}

/// The seeds the bounded search tries for a candidate with seed `seed`.
fn seeds(seed: u64, count: u64) -> impl Iterator<Item = u64> {
    std::iter::once(seed).chain((0..count).map(move |i| run_seed(seed, i)))
}

/// Shrinks `failing` (a traced violation of `target`) while the same property still fails;
/// returns the smallest run found, traced, with [`RunReport::shrink`] saying how far it
/// shrank. A run that is not a violation comes back unchanged.
pub fn shrink(target: &dyn Target, failing: &RunReport, limits: &ShrinkLimits) -> RunReport {
    shrink_with(target, failing, limits, &mut Probed::new())
}

/// [`shrink`], with the outcomes already probed on `target` (by other shrinks of one
/// check): the same result, without running a repeated probe again.
pub fn shrink_with(
    target: &dyn Target,
    failing: &RunReport,
    limits: &ShrinkLimits,
    probed: &mut Probed,
) -> RunReport {
    let Verdict::Violation(v) = &failing.verdict else {
        return failing.clone();
    };
    let mut p = Prober {
        target,
        property: v.property.clone(),
        probes: 0,
        limits: limits.clone(),
        probed,
    };
    let mut cur = Candidate {
        config: failing.config.clone(),
        seed: failing.seed,
        choices: Some(failing.choices.clone()),
    };
    loop {
        let mut changed = false;
        // Structure, greedily, until no single reduction fails.
        'structure: loop {
            for r in reductions(&cur) {
                if size(&r.candidate.config) >= size(&cur.config) {
                    continue;
                }
                if let Some(next) = p.reproduce(&r.candidate) {
                    cur = next;
                    changed = true;
                    continue 'structure;
                }
                if p.exhausted() {
                    break 'structure;
                }
            }
            break;
        }
        let shorter = p.ddmin(&cur);
        if shorter.choices.as_ref().map(Vec::len) < cur.choices.as_ref().map(Vec::len) {
            cur = shorter;
            changed = true;
        }
        if !changed || p.exhausted() {
            break;
        }
    }
    let cur = tidy(&mut p, cur);
    let mut report = target.run(
        &failing.scenario,
        &cur.config,
        cur.seed,
        cur.choices.as_deref(),
    );
    report.shrink = Some(ShrinkStats {
        from_steps: failing.steps,
        from_clients: active_clients(&failing.config).len(),
        from_ops: total_ops(&failing.config),
        from_faults: faults_in(failing),
        probes: p.probes,
        exhausted: p.exhausted(),
        from_numbered_steps: Some(failing.numbered_steps()),
    });
    report
}

/// Cosmetics that keep the run identical: the fault budget cut to the faults used, and
/// `client_ops` folded back into `ops` when every client runs the same prefix.
fn tidy(p: &mut Prober<'_>, cur: Candidate) -> Candidate {
    let mut cfg = cur.config.clone();
    let lists = explicit(&cfg);
    if let Some(first) = lists.first() {
        let k = first.len();
        if lists.iter().all(|l| *l == (0..k).collect::<Vec<_>>()) {
            cfg.ops = k;
            cfg.client_ops = None;
        }
    }
    if cfg.faults.is_empty() {
        cfg.fault_budget = 0;
    }
    if cfg != cur.config && p.fails(&cfg, cur.seed, cur.choices.as_deref()) {
        Candidate { config: cfg, ..cur }
    } else {
        cur
    }
}

/// Checks that `r` (a violation) is minimal: every single reduction of it ([`reductions`],
/// replayed and with the bounded seed search) and every single choice removed from its
/// schedule makes the property pass. Returns what could still be removed.
pub fn is_minimal(target: &dyn Target, r: &RunReport, limits: &ShrinkLimits) -> Result<(), String> {
    let Verdict::Violation(v) = &r.verdict else {
        return Err(format!("expected a violation, found {}", r.verdict.name()));
    };
    let token = crate::sim::Token::decode(&r.token).map_err(|e| e.to_string())?;
    let mut probed = Probed::new();
    let mut p = Prober {
        target,
        property: v.property.clone(),
        probes: 0,
        limits: ShrinkLimits {
            max_probes: u64::MAX,
            seeds: limits.seeds,
            deadline: None,
        },
        probed: &mut probed,
    };
    let cur = Candidate {
        config: token.config.clone(),
        seed: token.seed,
        choices: token.choices.clone(),
    };
    if !p.fails(&cur.config, cur.seed, cur.choices.as_deref()) {
        return Err("the run does not fail when replayed".into());
    }
    let mut removable = Vec::new();
    for red in reductions(&cur) {
        if size(&red.candidate.config) >= size(&cur.config) {
            continue;
        }
        if let Some(found) = p.reproduce(&red.candidate) {
            removable.push(format!(
                "{} (still fails with seed {})",
                red.what, found.seed
            ));
        }
    }
    let list = cur.choices.clone().unwrap_or_default();
    for i in 0..list.len() {
        let mut fewer = list.clone();
        fewer.remove(i);
        if p.fails(&cur.config, cur.seed, Some(&fewer)) {
            removable.push(format!("choice {i} of the schedule"));
        }
    }
    if removable.is_empty() {
        Ok(())
    } else {
        Err(format!("could still remove: {}", removable.join("; ")))
    }
}
