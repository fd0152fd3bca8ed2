package gate

// PatternWitness exposes patternWitness to the package's tests.
var PatternWitness = patternWitness
