// A worker that fails as it starts: for the proxy's audit-thread failure test.
throw new Error('broken on purpose')
