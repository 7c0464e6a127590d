"""The red-team suite (issue 32): each attack tried on Byline, kept as a test that fails when the
defence is taken away. One module per kind of attack."""
