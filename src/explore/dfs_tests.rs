//! The engine against stateright's own depth-first checker, both run on the same models:
//! the same counts, depth and discoveries (paths included) on one thread; the same
//! visited set and verdict on several.

use super::*;
use stateright::{Checker, HasDiscoveries};

/// A directed graph with a diamond (0→1→3, 0→2→3), a cycle (3→4→5→3) and a dead end (6),
/// whose nodes each property judges by a table.
struct Graph {
    edges: Vec<Vec<u32>>,
    /// Nodes where "no bad node" fails.
    bad: Vec<u32>,
    /// Nodes the `sometimes` property looks for.
    goal: Vec<u32>,
    /// Nodes outside the boundary.
    outside: Vec<u32>,
}

impl Graph {
    fn new(bad: &[u32], goal: &[u32], outside: &[u32]) -> Graph {
        Graph {
            edges: vec![
                vec![1, 2],
                vec![3],
                vec![3, 6],
                vec![4],
                vec![5],
                vec![3, 7],
                vec![],
                vec![0, 6],
            ],
            bad: bad.to_vec(),
            goal: goal.to_vec(),
            outside: outside.to_vec(),
        }
    }
}

impl Successors for Graph {}

impl Model for Graph {
    type State = u32;
    type Action = u32;

    fn init_states(&self) -> Vec<u32> {
        vec![0, 6]
    }

    fn actions(&self, s: &u32, actions: &mut Vec<u32>) {
        actions.extend(&self.edges[*s as usize]);
    }

    fn next_state(&self, _: &u32, to: u32) -> Option<u32> {
        Some(to)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("no bad node", |g: &Graph, s: &u32| !g.bad.contains(s)),
            Property::sometimes("a goal", |g: &Graph, s: &u32| g.goal.contains(s)),
        ]
    }

    fn within_boundary(&self, s: &u32) -> bool {
        !self.outside.contains(s)
    }
}

/// A torus of `n × n` points stepped by +1 in x or +`k` in y (mod `n`); "avoid" fails on
/// every point whose x + 2y is `hole` mod `m`; "reach" holds where x = y = n - 1.
struct Torus {
    n: u32,
    k: u32,
    m: u32,
    hole: Option<u32>,
}

impl Successors for Torus {}

impl Model for Torus {
    type State = (u32, u32);
    type Action = u8;

    fn init_states(&self) -> Vec<(u32, u32)> {
        vec![(0, 0)]
    }

    fn actions(&self, _: &(u32, u32), actions: &mut Vec<u8>) {
        actions.extend([0, 1]);
    }

    fn next_state(&self, &(x, y): &(u32, u32), a: u8) -> Option<(u32, u32)> {
        Some(match a {
            0 => ((x + 1) % self.n, y),
            _ => (x, (y + self.k) % self.n),
        })
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("avoid", |t: &Torus, &(x, y): &(u32, u32)| {
                t.hole.is_none_or(|h| (x + 2 * y) % t.m != h)
            }),
            Property::sometimes("reach", |t: &Torus, &(x, y): &(u32, u32)| {
                x == t.n - 1 && y == t.n - 1
            }),
        ]
    }
}

/// A chain 0 → 1 → … → 9 with a branch at 4 to a dead end 20; "settles" (eventually)
/// holds at 9 only, so the dead end's path is its discovery.
struct Chain;

impl Successors for Chain {}

impl Model for Chain {
    type State = u32;
    type Action = u32;

    fn init_states(&self) -> Vec<u32> {
        vec![0]
    }

    fn actions(&self, s: &u32, actions: &mut Vec<u32>) {
        match s {
            4 => actions.extend([5, 20]),
            9 | 20 => {}
            s => actions.push(s + 1),
        }
    }

    fn next_state(&self, _: &u32, to: u32) -> Option<u32> {
        Some(to)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::eventually("settles", |_: &Chain, s: &u32| *s == 9),
            Property::always("fine", |_: &Chain, _: &u32| true),
        ]
    }
}

/// A search's figures and its discoveries' paths, by property name.
type Run<M> = (
    Counts,
    Vec<(
        &'static str,
        Vec<(<M as Model>::State, Option<<M as Model>::Action>)>,
    )>,
);

/// stateright's depth-first checker's figures and discovered paths.
fn stateright_dfs<M>(model: M) -> Run<M>
where
    M: Model + Send + Sync + 'static,
    M::State: Clone + Hash + PartialEq + Send + Sync + std::fmt::Debug + 'static,
    M::Action: Clone + PartialEq + std::fmt::Debug + Send + Sync + 'static,
{
    let names: Vec<_> = model.properties().iter().map(|p| p.name).collect();
    let checker = model
        .checker()
        .finish_when(HasDiscoveries::AnyFailures)
        .spawn_dfs()
        .join();
    let counts = Counts {
        states: checker.state_count(),
        unique: checker.unique_state_count(),
        max_depth: checker.max_depth(),
        slept: 0,
    };
    let mut discoveries = checker.discoveries();
    let found = names
        .into_iter()
        .filter_map(|n| Some((n, discoveries.remove(n)?.into_vec())))
        .collect();
    (counts, found)
}

/// This engine's figures and discovered paths on `threads` threads.
fn ours<M>(model: &M, threads: usize) -> Run<M>
where
    M: Successors + Sync,
    M::State: Clone + Hash + Send,
    M::Action: Clone,
{
    let searched = search(model, threads, None);
    let found = model
        .properties()
        .iter()
        .filter_map(|p| Some((p.name, path(model, searched.discovery(p.name)?))))
        .collect();
    (searched.counts, found)
}

fn same_as_stateright<M>(make: impl Fn() -> M)
where
    M: Successors + Send + Sync + 'static,
    M::State: Clone + Hash + PartialEq + Send + Sync + std::fmt::Debug + 'static,
    M::Action: Clone + PartialEq + std::fmt::Debug + Send + Sync + 'static,
{
    let theirs = stateright_dfs(make());
    let mine = ours(&make(), 1);
    assert_eq!(mine.0, theirs.0, "counts");
    assert_eq!(mine.1, theirs.1, "discoveries");
}

#[test]
fn a_graph_with_a_diamond_and_a_cycle_is_searched_as_stateright_searches_it() {
    // Everything: no failure, a goal seen on several paths (the last one is kept).
    same_as_stateright(|| Graph::new(&[], &[3, 6], &[]));
    let (counts, found) = ours(&Graph::new(&[], &[3, 6], &[]), 1);
    assert_eq!((counts.unique, counts.states), (8, 13));
    assert_eq!(found.len(), 1);
    // A failure, with a boundary cutting the dead end away.
    same_as_stateright(|| Graph::new(&[5], &[7], &[6]));
    let (counts, found) = ours(&Graph::new(&[5], &[7], &[6]), 1);
    assert_eq!(counts.unique, 7);
    let (name, path) = &found[0];
    assert_eq!(*name, "no bad node");
    assert_eq!(path.last().map(|(s, a)| (*s, *a)), Some((5, None)));
}

#[test]
fn a_large_space_with_many_failures_keeps_the_last_of_the_first_block() {
    // Failures in many blocks: the search stops after the first block that has one, and
    // the discovery is the last failing state of that block.
    for (n, k, m, hole) in [
        (200, 7, 97, Some(40)),
        (120, 1, 13, Some(5)),
        (90, 3, 1, None),
    ] {
        same_as_stateright(|| Torus { n, k, m, hole });
    }
    let (counts, found) = ours(
        &Torus {
            n: 90,
            k: 3,
            m: 1,
            hole: None,
        },
        1,
    );
    assert_eq!(counts.unique, 90 * 30);
    assert_eq!(counts.states, 2 * 90 * 30 + 1);
    assert!(
        found.is_empty(),
        "no failure, and y = 89 is no multiple of 3"
    );
}

#[test]
fn an_eventually_property_is_discovered_at_a_terminal_state() {
    same_as_stateright(|| Chain);
    let (_, found) = ours(&Chain, 1);
    let (name, path) = &found[0];
    assert_eq!(*name, "settles");
    assert_eq!(path.last().map(|(s, _)| *s), Some(20));
}

#[test]
fn several_threads_visit_the_same_states_and_find_the_same_failures() {
    let clean = || Torus {
        n: 300,
        k: 1,
        m: 1,
        hole: None,
    };
    let (one, _) = ours(&clean(), 1);
    assert_eq!(one.unique, 300 * 300);
    for threads in [2, 3] {
        let (many, found) = ours(&clean(), threads);
        assert_eq!((many.unique, many.states), (one.unique, one.states));
        assert_eq!(found.len(), 1, "reach, and no failure");
        let failing = Torus {
            n: 300,
            k: 1,
            m: 1000,
            hole: Some(700),
        };
        let (_, found) = ours(&failing, threads);
        let (_, path) = found
            .iter()
            .find(|(n, _)| *n == "avoid")
            .expect("the failure is found");
        let &((x, y), _) = path.last().expect("a path");
        assert_eq!((x + 2 * y) % 1000, 700);
        // Every step of the path is one of the model's.
        for w in path.windows(2) {
            let (from, a) = (&w[0].0, w[0].1.expect("an action"));
            assert_eq!(failing.next_state(from, a), Some(w[1].0));
        }
    }
}

#[test]
fn the_fingerprint_set_holds_each_once_through_growth() {
    let mut set = Set::default();
    assert!(set.insert(0));
    assert!(!set.insert(0));
    // Fingerprints that share their high bits (one slot) and spread ones, past growth.
    let fps: Vec<u64> = (1..5000u64)
        .map(|i| {
            if i % 2 == 0 {
                i
            } else {
                i.wrapping_mul(0x9e37_79b9_7f4a_7c15)
            }
        })
        .collect();
    for &fp in &fps {
        assert!(set.insert(fp), "{fp} is new");
    }
    for &fp in &fps {
        assert!(!set.insert(fp), "{fp} is there");
    }
    assert_eq!(set.len(), fps.len() + 1);
    assert!(set.slots.len() * 3 >= set.len() * 4);
}
