"""`policyc playground`: one local page to edit a policy and run a payload through it."""
