"""The `device` fixture: each host device in turn as the default device of the test."""
import pytest

import tessel

DEVICES = ["cpu", "reference"]


@pytest.fixture(params=DEVICES)
def device(request):
    old = tessel.default_device()
    tessel.set_default_device(request.param)
    yield request.param
    tessel.set_default_device(old)
