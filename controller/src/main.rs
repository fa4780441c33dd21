fn main() -> anyhow::Result<()> {
    anyhow::bail!("the controller is not implemented yet")
}
