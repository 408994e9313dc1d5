"""The local stack: the embedded AWS (moto with Onceflow's engine patches), the stack built from
template.yaml, the emulated event sources and function runtime, faults, the demo. Needs the
`local` extra (moto, aws-sam-translator, the functions' own dependencies)."""
