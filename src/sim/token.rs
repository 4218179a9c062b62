//! Replay tokens: one short string that reproduces a run exactly.
//!
//! `TARGET:SCENARIO:PAYLOAD`, where the payload (URL-safe base64) carries every knob of the
//! run's [`SimConfig`], the seed, and, for a shrunk run, its choice sequence. The target
//! and scenario names are for people and for finding the model; the knobs come from the
//! payload, so a token keeps working when a scenario's definition or a CLI override differs.

use super::config::SimConfig;
use crate::scenario::{FaultKind, FaultSet, Strategy};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;

const VERSION: u8 = 1;

/// In place of the client-operations trailer when there is none but a workload follows.
const NO_CLIENT_OPS: u64 = u64::MAX;

/// Most entries of one list of a trailer (a bound on what a token can make us allocate;
/// a longer list runs out of payload bytes and is an error).
const MAX_LIST: u64 = 1 << 16;

/// A decoded replay token.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// `MODEL/VARIANT`.
    pub target: String,
    /// The scenario's name.
    pub scenario: String,
    /// The run's knobs.
    pub config: SimConfig,
    /// The run's seed.
    pub seed: u64,
    /// The choices of a shrunk run (`None`: the strategy's own walk from the seed).
    pub choices: Option<Vec<u32>>,
}

/// A token that cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad replay token: {0}")]
pub struct TokenError(String);

impl Token {
    /// Renders the token.
    pub fn encode(&self) -> String {
        let c = &self.config;
        let mut b = vec![VERSION];
        put(&mut b, c.clients as u64);
        put(&mut b, c.ops as u64);
        let mask = FaultKind::ALL
            .iter()
            .enumerate()
            .filter(|(_, k)| c.faults.has(**k))
            .fold(0u64, |m, (i, _)| m | 1 << i);
        put(&mut b, mask);
        put(&mut b, c.fault_budget as u64);
        put(&mut b, c.fault_probability.to_bits());
        match c.strategy {
            Strategy::Random => put(&mut b, 0),
            Strategy::Swarm => put(&mut b, 1),
            Strategy::Pct { depth } => put(&mut b, 2 + depth as u64),
        }
        put(&mut b, c.memory_limit.map_or(0, |m| m as u64 + 1));
        put(&mut b, c.persistent as u64);
        put(&mut b, c.shards as u64);
        put(&mut b, self.seed);
        match &self.choices {
            None => put(&mut b, 0),
            Some(ch) => {
                put(&mut b, ch.len() as u64 + 1);
                for &x in ch {
                    put(&mut b, x as u64);
                }
            }
        }
        // Optional trailer (absent in tokens of full runs): the operations each client runs.
        if let Some(per_client) = &c.client_ops {
            put(&mut b, per_client.len() as u64);
            for list in per_client {
                put(&mut b, list.len() as u64);
                for &i in list {
                    put(&mut b, i as u64);
                }
            }
        } else if c.workload.is_some() {
            put(&mut b, NO_CLIENT_OPS);
        }
        // Second optional trailer: a chosen workload (exhaustive exploration's).
        if let Some(workload) = &c.workload {
            put(&mut b, workload.len() as u64);
            for client in workload {
                put(&mut b, client.len() as u64);
                for values in client {
                    put(&mut b, values.len() as u64);
                    for &v in values {
                        put(&mut b, v);
                    }
                }
            }
        }
        format!(
            "{}:{}:{}",
            self.target,
            self.scenario,
            URL_SAFE_NO_PAD.encode(&b)
        )
    }

    /// Parses a token; the knobs not carried by it (step bounds, fault sizes) take their
    /// defaults.
    pub fn decode(text: &str) -> Result<Token, TokenError> {
        let text = text.trim();
        let mut parts = text.rsplitn(3, ':');
        let payload = parts.next().unwrap_or_default();
        let scenario = parts.next();
        let target = parts.next();
        let (Some(scenario), Some(target)) = (scenario, target) else {
            return Err(TokenError(format!(
                "expected MODEL/VARIANT:SCENARIO:PAYLOAD, found {text:?}"
            )));
        };
        let bytes = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|e| TokenError(format!("payload is not base64 ({e})")))?;
        let mut r = Reader { b: &bytes, pos: 0 };
        let version = r.byte()?;
        if version != VERSION {
            return Err(TokenError(format!(
                "expected version {VERSION}, found {version}"
            )));
        }
        let clients = r.num()? as usize;
        let ops = r.num()? as usize;
        let mask = r.num()?;
        let kinds: Vec<FaultKind> = FaultKind::ALL
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(_, k)| *k)
            .collect();
        let mut scenario_def = crate::scenario::Scenario::new(scenario, clients, ops);
        scenario_def.faults = FaultSet::of(&kinds);
        let mut config = SimConfig::from_scenario(&scenario_def);
        config.fault_budget = r.num()? as u32;
        config.fault_probability = f64::from_bits(r.num()?);
        config.strategy = match r.num()? {
            0 => Strategy::Random,
            1 => Strategy::Swarm,
            d => Strategy::Pct {
                depth: (d - 2) as u32,
            },
        };
        config.memory_limit = match r.num()? {
            0 => None,
            m => Some((m - 1) as usize),
        };
        config.persistent = r.num()? != 0;
        config.shards = r.num()? as usize;
        let seed = r.num()?;
        let choices = match r.num()? {
            0 => None,
            n => {
                let mut v = Vec::with_capacity((n - 1) as usize);
                for _ in 0..n - 1 {
                    v.push(r.num()? as u32);
                }
                Some(v)
            }
        };
        if r.pos < bytes.len() {
            let n = r.num()?;
            if n != NO_CLIENT_OPS {
                let mut per_client = Vec::new();
                for _ in 0..n {
                    let len = r.num()?;
                    let mut list = Vec::new();
                    for _ in 0..len.min(MAX_LIST) {
                        list.push(r.num()? as usize);
                    }
                    per_client.push(list);
                }
                config.client_ops = Some(per_client);
            }
        }
        if r.pos < bytes.len() {
            let clients = r.num()?.min(MAX_LIST);
            let mut workload = Vec::new();
            for _ in 0..clients {
                let ops = r.num()?.min(MAX_LIST);
                let mut per_op = Vec::new();
                for _ in 0..ops {
                    let len = r.num()?.min(MAX_LIST);
                    let mut values = Vec::new();
                    for _ in 0..len {
                        values.push(r.num()?);
                    }
                    per_op.push(values);
                }
                workload.push(per_op);
            }
            config.workload = Some(workload);
        }
        if r.pos != bytes.len() {
            return Err(TokenError(format!(
                "expected {} payload bytes, found {}",
                r.pos,
                bytes.len()
            )));
        }
        Ok(Token {
            target: target.to_string(),
            scenario: scenario.to_string(),
            config,
            seed,
            choices,
        })
    }
}

fn put(b: &mut Vec<u8>, mut x: u64) {
    loop {
        let byte = (x & 0x7f) as u8;
        x >>= 7;
        if x == 0 {
            b.push(byte);
            return;
        }
        b.push(byte | 0x80);
    }
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8, TokenError> {
        let x = *self
            .b
            .get(self.pos)
            .ok_or_else(|| TokenError("payload ends early".into()))?;
        self.pos += 1;
        Ok(x)
    }

    fn num(&mut self) -> Result<u64, TokenError> {
        let mut x = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.byte()?;
            x |= ((byte & 0x7f) as u64) << shift;
            if byte & 0x80 == 0 {
                return Ok(x);
            }
        }
        Err(TokenError("a number in the payload is too long".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    #[test]
    fn tokens_round_trip() {
        let s = Scenario::new("evict", 3, 2)
            .faults(&[FaultKind::Evict, FaultKind::Crash])
            .strategy(Strategy::Pct { depth: 2 })
            .memory_limit(900);
        let config = SimConfig::from_scenario(&s);
        for choices in [None, Some(vec![0, 1, 2, 300, 70000])] {
            let t = Token {
                target: "fifo/published".into(),
                scenario: "evict".into(),
                config: config.clone(),
                seed: 0xdead_beef_1234,
                choices,
            };
            let text = t.encode();
            assert_eq!(Token::decode(&text).unwrap(), t);
        }
    }

    #[test]
    fn tokens_with_chosen_operations_round_trip() {
        let mut config = SimConfig::from_scenario(&Scenario::new("two", 3, 4));
        config.client_ops = Some(vec![vec![0, 3], vec![], vec![1, 2, 3]]);
        let t = Token {
            target: "lock/fixed".into(),
            scenario: "two".into(),
            config,
            seed: 7,
            choices: Some(vec![1, 0, 2, 5]),
        };
        assert_eq!(Token::decode(&t.encode()).unwrap(), t);
        // A token without the trailer runs every operation.
        let mut all = t.clone();
        all.config.client_ops = None;
        assert_eq!(
            Token::decode(&all.encode()).unwrap().config.client_ops,
            None
        );
    }

    #[test]
    fn tokens_with_a_chosen_workload_round_trip() {
        let mut config = SimConfig::from_scenario(&Scenario::new("explore", 2, 2));
        config.workload = Some(vec![vec![vec![1], vec![0, 300]], vec![vec![], vec![2]]]);
        let mut t = Token {
            target: "fifo/published".into(),
            scenario: "explore".into(),
            config,
            seed: 1,
            choices: Some(vec![0, 1, 1, 0]),
        };
        assert_eq!(Token::decode(&t.encode()).unwrap(), t);
        t.config.client_ops = Some(vec![vec![1], vec![0, 1]]);
        assert_eq!(Token::decode(&t.encode()).unwrap(), t);
    }

    #[test]
    fn bad_tokens_say_what_was_expected() {
        assert_eq!(
            Token::decode("nonsense").unwrap_err().to_string(),
            "bad replay token: expected MODEL/VARIANT:SCENARIO:PAYLOAD, found \"nonsense\""
        );
        assert!(Token::decode("a/b:c:!!!")
            .unwrap_err()
            .to_string()
            .starts_with("bad replay token: payload is not base64"));
        assert_eq!(
            Token::decode("a/b:c:AQ").unwrap_err().to_string(),
            "bad replay token: payload ends early"
        );
    }
}
