package journal

// CreatesFrom is the create journal of the provider's configured data, asked
// for by capability so no domain package needs the provider's types; a
// disabled journal before Configure.
func CreatesFrom(data any) *Creates {
	if c, ok := data.(interface{ CreateJournal() *Creates }); ok && c.CreateJournal() != nil {
		return c.CreateJournal()
	}
	return NewCreates("")
}

// JobsFrom is the job journal of the provider's configured data; an inert
// one (the zero Jobs) before Configure.
func JobsFrom(data any) *Jobs {
	if c, ok := data.(interface{ JobJournal() *Jobs }); ok && c.JobJournal() != nil {
		return c.JobJournal()
	}
	return &Jobs{}
}

// CheckpointsFrom is the checkpoint journal of the provider's configured
// data; a disabled one before Configure.
func CheckpointsFrom(data any) *Checkpoints {
	if c, ok := data.(interface{ CheckpointJournal() *Checkpoints }); ok && c.CheckpointJournal() != nil {
		return c.CheckpointJournal()
	}
	return &Checkpoints{}
}
