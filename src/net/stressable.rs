//! [`Stressable`]: a model, its types erased, that `kvsim stress` runs from OS threads
//! against real servers (the erased face of [`stress()`](super::stress())).

use super::stress::{stress, StressConfig, StressError, StressReport};
use crate::model::Model;

/// A model `kvsim stress` can run without knowing its types: every [`Model`] whose
/// operations and results cross threads.
pub trait Stressable: Send + Sync {
    /// Runs the model from OS threads against real servers and checks its history
    /// ([`stress()`]), its operation types erased.
    fn stress(&self, config: &StressConfig) -> Result<StressReport, StressError>;
}

impl<M> Stressable for M
where
    M: Model + Send + Sync,
    M::Op: Send + 'static,
    M::Ret: Send + 'static,
{
    fn stress(&self, config: &StressConfig) -> Result<StressReport, StressError> {
        stress(self, config).map(|run| run.erase(self.history_format()))
    }
}
