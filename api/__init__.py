"""Site-wide API plumbing both apps share; not a Django app, and it imports none."""
