"""Halyard Python entities on their own: listeners and WaitSets fire (data available, matched
counts, timeouts), read/take return samples with SampleInfo, dispose notices arrive, and
bad QoS, a bad topic name or a wrong sample type raise the DDSError subclass that names the
problem."""

import threading
import time

import pytest

import halyard
from halyard.idl import IdlStruct
from halyard.idl.annotations import key
from halyard.idl.types import int32

DOMAIN = 90
P = halyard.Policy


class Reading(IdlStruct, typename="Test::Reading"):
    sensor: int32
    key("sensor")
    value: float


RELIABLE = halyard.Qos(P.Reliability.Reliable(), P.History.KeepAll)


@pytest.fixture(scope="module")
def dp():
    return halyard.DomainParticipant(DOMAIN)


def test_listener_data_available_and_matched(dp):
    topic = halyard.Topic(dp, "listener_topic", Reading)
    got = threading.Event()
    matched = []

    class L(halyard.Listener):
        def on_data_available(self, reader):
            if reader.take(10):
                got.set()

        def on_subscription_matched(self, reader, status):
            matched.append(status["current_count"])

    rd = halyard.DataReader(dp, topic, qos=RELIABLE, listener=L())
    pub_matched = []
    wr = halyard.DataWriter(dp, topic, qos=RELIABLE,
                            listener=halyard.Listener(on_publication_matched=lambda w, s: pub_matched.append(s["current_count"])))
    wr.wait_for_matched(1, 5)
    wr.write(Reading(1, 2.5))
    assert got.wait(5), "on_data_available was not called"
    deadline = time.time() + 5
    while (not matched or not pub_matched) and time.time() < deadline:
        time.sleep(0.01)
    assert matched and matched[-1] == 1
    assert pub_matched and pub_matched[-1] == 1
    assert rd.get_subscription_matched_status()["current_count"] == 1


def test_waitset_read_condition_timeout_and_trigger(dp):
    topic = halyard.Topic(dp, "waitset_topic", Reading)
    rd = halyard.DataReader(dp, topic, qos=RELIABLE)
    wr = halyard.DataWriter(dp, topic, qos=RELIABLE)
    rc = halyard.ReadCondition(rd, sample_states=halyard.SampleState.NotRead)
    guard = halyard.GuardCondition()
    ws = halyard.WaitSet(dp)
    ws.attach(rc)
    ws.attach(guard)
    t0 = time.monotonic()
    assert ws.wait(0.2) == []
    assert time.monotonic() - t0 >= 0.19
    wr.wait_for_matched(1, 5)
    wr.write(Reading(7, 1.0))
    assert ws.wait(5) == [rc]
    samples = rd.take(10, condition=rc)
    assert [(s.sensor, s.value) for s in samples] == [(7, 1.0)]
    info = samples[0].sample_info
    assert info.valid_data and info.instance_state == "ALIVE" and info.view_state == "NEW"
    assert info.sample_state == "NOT_READ" and info.source_timestamp is not None
    assert info.instance_handle == wr.lookup_instance(Reading(7, 0.0))
    assert ws.wait(0.05) == []
    guard.set(True)
    assert ws.wait(1) == [guard]


def test_query_condition_selects_sorts_and_takes_new_parameters(dp):
    topic = halyard.Topic(dp, "query_topic", Reading)
    rd = halyard.DataReader(dp, topic, qos=RELIABLE)
    wr = halyard.DataWriter(dp, topic, qos=RELIABLE)
    wr.wait_for_matched(1, 5)
    for sensor, value in [(1, 5.0), (2, 0.5), (3, 2.5), (4, 9.0)]:
        wr.write(Reading(sensor, value))
    deadline = time.time() + 5
    while len(rd.read(10)) < 4 and time.time() < deadline:
        time.sleep(0.01)
    qc = halyard.QueryCondition(rd, "value > %0 ORDER BY value", ["1"])
    assert qc.expression == "value > %0 ORDER BY value"
    assert qc.triggered
    assert [s.sensor for s in rd.read(10, condition=qc)] == [3, 1, 4]
    qc.set_parameters(["4.5"])
    assert [s.sensor for s in rd.take(10, condition=qc)] == [1, 4]
    assert sorted(s.sensor for s in rd.take(10)) == [2, 3]
    with pytest.raises(halyard.BadParameterError, match="colour"):
        halyard.QueryCondition(rd, "colour = 'red'")


def test_content_filtered_topic_reader_sees_only_what_its_filter_accepts(dp):
    topic = halyard.Topic(dp, "cft_topic", Reading)
    cft = halyard.ContentFilteredTopic(dp, "cft_high", topic, "value >= %0", ["2"])
    assert cft.name == "cft_high" and cft.expression == "value >= %0"
    assert cft.parameters == ["2"]
    rd = halyard.DataReader(dp, cft, qos=RELIABLE)
    wr = halyard.DataWriter(dp, topic, qos=RELIABLE)
    wr.wait_for_matched(1, 5)
    for sensor, value in [(1, 5.0), (2, 0.5), (3, 2.5)]:
        wr.write(Reading(sensor, value))
    deadline = time.time() + 5
    got = []
    while len(got) < 2 and time.time() < deadline:
        got += rd.take(10)
        time.sleep(0.01)
    assert sorted(s.sensor for s in got) == [1, 3]
    cft.set_parameters(["6"])
    wr.write(Reading(4, 5.5))
    wr.write(Reading(5, 7.0))
    deadline = time.time() + 5
    got = []
    while not got and time.time() < deadline:
        got += rd.take(10)
        time.sleep(0.01)
    time.sleep(0.1)
    got += rd.take(10)
    assert [s.sensor for s in got] == [5]
    with pytest.raises(halyard.BadParameterError, match="sensr"):
        halyard.ContentFilteredTopic(dp, "cft_bad", topic, "sensr = 1")


def test_read_then_take_and_dispose(dp):
    topic = halyard.Topic(dp, "dispose_topic", Reading)
    rd = halyard.DataReader(dp, topic, qos=RELIABLE)
    wr = halyard.DataWriter(dp, topic, qos=RELIABLE)
    wr.wait_for_matched(1, 5)
    wr.write(Reading(3, 9.0))
    assert rd.wait_for_data(5)
    first = rd.read(10)
    assert len(first) == 1 and first[0].sample_info.sample_state == "NOT_READ"
    again = rd.read(10)
    assert again[0].sample_info.sample_state == "READ"
    wr.dispose(Reading(3, 0.0))
    deadline = time.time() + 5
    notices = []
    while not notices and time.time() < deadline:
        notices = [s for s in rd.take(10) if isinstance(s, halyard.InvalidSample)]
        time.sleep(0.01)
    assert notices and notices[0].sample_info.instance_state == "NOT_ALIVE_DISPOSED"
    assert notices[0].key.sensor == 3
    assert not notices[0].sample_info.valid_data


def test_bad_qos_names_the_policy(dp):
    topic = halyard.Topic(dp, "badqos_topic", Reading)
    with pytest.raises(halyard.QosError, match="HISTORY"):
        halyard.DataWriter(dp, topic, qos=halyard.Qos(P.History.KeepLast(0)))
    with pytest.raises(halyard.QosError, match="RESOURCE_LIMITS|HISTORY"):
        halyard.DataReader(dp, topic, qos=halyard.Qos(P.History.KeepLast(10), P.ResourceLimits(max_samples_per_instance=2)))
    with pytest.raises(TypeError):
        halyard.Qos("reliable")


def test_a_topic_name_outside_the_character_set_is_refused(dp):
    with pytest.raises(halyard.BadParameterError, match="character ' '"):
        halyard.Topic(dp, "two words", Reading)
    halyard.Topic(dp, "rt/two_words", Reading)


def test_wrong_sample_type_and_member_value(dp):
    topic = halyard.Topic(dp, "wrongtype_topic", Reading)
    wr = halyard.DataWriter(dp, topic)
    with pytest.raises(halyard.SampleTypeError, match="Reading"):
        wr.write("not a sample")
    with pytest.raises(halyard.SampleTypeError, match="sensor.*int32"):
        wr.write(Reading(2**40, 1.0))
    with pytest.raises(halyard.SampleTypeError, match="value"):
        wr.write(Reading(1, "x"))
    assert issubclass(halyard.SampleTypeError, halyard.DDSError)


def test_partitions_decide_matching(dp):
    topic = halyard.Topic(dp, "partition_topic", Reading)
    pub = halyard.Publisher(dp, halyard.Qos(P.Partition(["a"])))
    wr = halyard.DataWriter(pub, topic, qos=RELIABLE)
    other = halyard.DataReader(halyard.Subscriber(dp, halyard.Qos(P.Partition(["b"]))), topic, qos=RELIABLE)
    with pytest.raises(halyard.DDSTimeoutError):
        other.wait_for_matched(1, 0.3)
    same = halyard.DataReader(halyard.Subscriber(dp, halyard.Qos(P.Partition(["a"]))), topic, qos=RELIABLE)
    same.wait_for_matched(1, 5)
    assert wr.get_publication_matched_status()["current_count"] == 1
    assert other.get_subscription_matched_status()["current_count"] == 0


def test_status_condition_on_publication_matched(dp):
    topic = halyard.Topic(dp, "status_topic", Reading)
    wr = halyard.DataWriter(dp, topic, qos=RELIABLE)
    sc = halyard.StatusCondition(wr, halyard.StatusMask.PublicationMatched)
    ws = halyard.WaitSet(dp)
    ws.attach(sc)
    assert ws.wait(0.1) == []
    rd = halyard.DataReader(dp, topic, qos=RELIABLE)
    assert ws.wait(5) == [sc]
    assert rd.get_subscription_matched_status()["current_count"] == 1


def test_blocking_calls_release_the_gil(dp):
    topic = halyard.Topic(dp, "blocking_topic", Reading)
    rd = halyard.DataReader(dp, topic, qos=RELIABLE)
    ws = halyard.WaitSet(dp)
    ws.attach(halyard.ReadCondition(rd))
    ticks = []
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.005)

    t = threading.Thread(target=spin)
    t.start()
    try:
        for wait in (lambda: ws.wait(0.3), lambda: rd.wait_for_data(0.3)):
            before = len(ticks)
            assert not wait()
            # ~300 ms blocked in Halyard; the other Python thread ran meanwhile.
            assert len(ticks) - before >= 10
        before = len(ticks)
        with pytest.raises(halyard.DDSTimeoutError):
            rd.wait_for_matched(1, 0.3)
        assert len(ticks) - before >= 10
    finally:
        stop.set()
        t.join()


def test_deadline_and_liveliness_listeners(dp):
    topic = halyard.Topic(dp, "deadline_topic", Reading)
    q = halyard.Qos(P.Reliability.Reliable(), P.History.KeepAll, P.Deadline(halyard.duration(milliseconds=100)))
    missed, alive = threading.Event(), []

    class L(halyard.Listener):
        def on_requested_deadline_missed(self, reader, total):
            missed.set()

        def on_liveliness_changed(self, reader, status):
            alive.append(status["alive_count"])

    rd = halyard.DataReader(dp, topic, qos=q, listener=L())
    wr = halyard.DataWriter(dp, topic, qos=q)
    wr.wait_for_matched(1, 5)
    wr.write(Reading(1, 1.0))
    assert missed.wait(3), "on_requested_deadline_missed was not called"
    deadline = time.time() + 3
    while not alive and time.time() < deadline:
        time.sleep(0.01)
    assert alive and alive[-1] == 1
    assert rd.get_subscription_matched_status()["current_count"] == 1


def test_take_iter_yields_until_quiet(dp):
    topic = halyard.Topic(dp, "iter_topic", Reading)
    rd = halyard.DataReader(dp, topic, qos=RELIABLE)
    wr = halyard.DataWriter(dp, topic, qos=RELIABLE)
    wr.wait_for_matched(1, 5)
    for i in range(5):
        wr.write(Reading(i, float(i)))
    t0 = time.monotonic()
    got = [s.sensor for s in rd.take_iter(timeout=0.3)]
    assert got == [0, 1, 2, 3, 4]
    assert 0.25 <= time.monotonic() - t0 < 5


def test_default_best_effort_reader_gets_what_a_new_writer_writes_at_once():
    """The library's default reader (best effort) in one participant and a writer created after
    it in another, which writes as soon as it matched: every sample arrives, and the writer's
    delivery report says the reader is best effort (its delivery cannot be known)."""
    a, b = halyard.DomainParticipant(DOMAIN), halyard.DomainParticipant(DOMAIN)
    rd = halyard.DataReader(b, halyard.Topic(b, "trap_topic", Reading))
    wr = halyard.DataWriter(a, halyard.Topic(a, "trap_topic", Reading))
    wr.wait_for_matched(1, 10)
    for i in range(5):
        wr.write(Reading(i, float(i)))
    got = []
    deadline = time.time() + 5
    while len(got) < 5 and time.time() < deadline:
        got += [s.sensor for s in rd.take(10) if s is not None]
        time.sleep(0.01)
    assert sorted(got) == [0, 1, 2, 3, 4]
    report = wr.delivery_report()
    assert [(r["reception"], r["matched"]) for r in report] == [("unknown", True)]


def test_delivery_report_counts_what_a_reliable_reader_acknowledged(dp):
    other = halyard.DomainParticipant(DOMAIN)
    rd = halyard.DataReader(other, halyard.Topic(other, "report_topic", Reading), qos=RELIABLE)
    wr = halyard.DataWriter(dp, halyard.Topic(dp, "report_topic", Reading), qos=RELIABLE)
    wr.wait_for_matched(1, 10)
    for i in range(3):
        wr.write(Reading(i, 0.5))
    wr.wait_for_acknowledgments(10)
    (r,) = wr.delivery_report()
    assert (r["reception"], r["acknowledged"], r["owed"], r["matched"]) == ("acknowledged", 3, 3, True)
    assert len(r["reader"]) == 16 and not r["durability_service"]
    del rd
