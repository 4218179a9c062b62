//! Times the checker on one Porcupine file (development aid).
use kvsim::check::{check_linearizability, Limits};
use kvsim::formats::{read_history, Format, Value};
use kvsim::specs::cas_register::CasRegisterSpec;
use kvsim::specs::kv::KvSpec;
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("file");
    let reps: usize = std::env::args().nth(2).map_or(5, |s| s.parse().unwrap());
    for _ in 0..reps {
        let t = Instant::now();
        let v = if path.ends_with(".txt") {
            let h = read_history(&KvSpec, path.as_ref(), Some(Format::JepsenEdn)).unwrap();
            let t = Instant::now();
            let r = kvsim::check::check_linearizability(&KvSpec, &h, Limits::none());
            (r.verdict().name(), t.elapsed())
        } else {
            let spec = CasRegisterSpec::<Value>::new();
            let h = read_history(&spec, path.as_ref(), Some(Format::JepsenLog)).unwrap();
            let t = Instant::now();
            let r = check_linearizability(&spec, &h, Limits::none());
            (r.verdict().name(), t.elapsed())
        };
        println!("{} {:?} total {:?}", v.0, v.1, t.elapsed());
    }
}
