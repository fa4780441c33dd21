fn main() -> anyhow::Result<()> {
    anyhow::bail!("no command implemented yet")
}
