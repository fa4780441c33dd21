fn main() -> anyhow::Result<()> {
    anyhow::bail!("the conformance runner is not implemented yet")
}
