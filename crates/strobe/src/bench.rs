use clap::Args;
use std::path::Path;

#[derive(Args, Debug)]
pub struct BenchArgs {}

pub fn run(_a: BenchArgs, _cache: Option<&Path>) -> anyhow::Result<()> {
    anyhow::bail!("not yet")
}
