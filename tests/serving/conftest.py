def pytest_configure(config):
    config.addinivalue_line('markers', 'serving: starts a local Ray cluster (make test-serving; never in make test)')
