//! The publisher and subscriber of `halyard shapes`: entities built from the options, the
//! listener lines, and the two main loops.

use super::options::Options;
use halyard::cdr::BoundedString;
use halyard::qos::{
    DataReaderQos, DataRepresentation, DataWriterQos, Durability, History, Ownership, Presentation,
    PresentationAccessScope, PublisherQos, ReliabilityKind, SubscriberQos, TopicQos,
};
use halyard::{
    DataReader, DataReaderListener, DataWriter, DataWriterListener, DeadlineMissedStatus,
    DomainParticipant, Error, IncompatibleQosStatus, InstanceHandle, InstanceState,
    LivelinessChangedStatus, LivelinessLostStatus, MatchedStatus, ParticipantOptions, Selector,
};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The suite's type: `@appendable struct ShapeType { @key string<128> color; int32 x, y,
/// shapesize; sequence<uint8> additional_payload_size; }`, announced with its XTypes
/// description (so `cyclonedds typeof` prints that IDL). The payload is described as
/// `sequence<octet>`, as Cyclone DDS 0.10's `idlc` describes the suite's `sequence<uint8>`:
/// the same bytes on the wire, and Cyclone 0.10 refuses a TypeObject with XTypes' `uint8`
/// (a kind it does not know), so it would never match a writer announcing it.
#[derive(halyard::Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "ShapeType", extensibility = "appendable")]
pub struct ShapeType {
    #[key]
    pub color: BoundedString<128>,
    pub x: i32,
    pub y: i32,
    pub shapesize: i32,
    pub additional_payload_size: Vec<u8>,
}

/// The drawing area the shapes bounce in.
const WIDTH: i32 = 240;
const HEIGHT: i32 = 270;

/// Exit codes of `shape_main`.
const EXIT_OK: i32 = 0;
const EXIT_INIT: i32 = 2;

/// Set by SIGINT: the main loop ends at its next check.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The fragment size asked for with `--datafrag-size` (0: Halyard's default).
static DATAFRAG_SIZE: AtomicU64 = AtomicU64::new(0);
/// The SPDP period asked for with `--periodic-announcement` (0: Halyard's default).
static ANNOUNCE_MS: AtomicU64 = AtomicU64::new(0);

fn tune(cfg: &mut halyard_core::ParticipantConfig) {
    let frag = DATAFRAG_SIZE.load(Ordering::Relaxed) as usize;
    if frag > 0 {
        cfg.fragment_size = frag;
    }
    let ms = ANNOUNCE_MS.load(Ordering::Relaxed);
    if ms > 0 {
        cfg.spdp_interval = Duration::from_millis(ms);
    }
}

/// Runs the application; returns the exit code.
pub fn run(o: Options) -> i32 {
    if let Err(e) = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst)) {
        println!("cannot install the SIGINT handler: {e}");
        return EXIT_INIT;
    }
    DATAFRAG_SIZE.store(o.datafrag_size, Ordering::Relaxed);
    ANNOUNCE_MS.store(o.periodic_announcement_ms, Ordering::Relaxed);
    let popts = ParticipantOptions::from_env().map(|env| ParticipantOptions {
        tuning: Some(tune),
        ..env
    });
    let dp = match popts.and_then(|popts| DomainParticipant::with_options(o.domain, popts)) {
        Ok(dp) => dp,
        Err(e) => {
            println!("failed to create participant (missing license?): {e}");
            return EXIT_INIT;
        }
    };
    let names = topic_names(&o);
    let mut topics = Vec::new();
    for name in &names {
        println!("Create topic: {name}");
        match dp.create_topic::<ShapeType>(name) {
            Ok(t) => topics.push(t),
            Err(e) => {
                println!("failed to create topic: {e}");
                return EXIT_INIT;
            }
        }
    }
    let code = if o.publish {
        publish(&o, &dp, &topics)
    } else {
        subscribe(&o, &dp, &topics)
    };
    if code == EXIT_OK {
        println!("Done.");
    }
    code
}

fn topic_names(o: &Options) -> Vec<String> {
    let base = o.topic.clone().unwrap_or_default();
    (0..o.num_topics)
        .map(|i| {
            if i == 0 {
                base.clone()
            } else {
                format!("{base}{i}")
            }
        })
        .collect()
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// The QoS both sides share: reliability, durability, representation, ownership, deadline,
/// history.
fn common_qos(o: &Options) -> TopicQos {
    let mut q = TopicQos::default();
    q.reliability.kind = if o.reliable {
        ReliabilityKind::Reliable
    } else {
        ReliabilityKind::BestEffort
    };
    q.durability = match o.durability {
        'l' => Durability::TransientLocal,
        't' => Durability::Transient,
        'p' => Durability::Persistent,
        _ => Durability::Volatile,
    };
    q.data_representation = vec![if o.representation == 1 {
        DataRepresentation::Xcdr1
    } else {
        DataRepresentation::Xcdr2
    }];
    if o.strength != -1 {
        q.ownership = Ownership::Exclusive;
    }
    if o.deadline_ms > 0 {
        q.deadline = ms(o.deadline_ms);
    }
    match o.history_depth {
        0 => q.history = History::KeepAll,
        d if d > 0 => q.history = History::KeepLast(d.min(i64::from(i32::MAX)) as u32),
        _ => {}
    }
    q
}

/// PRESENTATION (a Publisher and Subscriber policy: at GROUP scope the publisher's coherent
/// sets span its writers).
fn presentation(o: &Options) -> Presentation {
    let mut p = Presentation::default();
    if o.coherent || o.ordered {
        p.coherent_access = o.coherent;
        p.ordered_access = o.ordered;
        p.access_scope = match o.access_scope {
            Some('t') => PresentationAccessScope::Topic,
            Some('g') => PresentationAccessScope::Group,
            _ => PresentationAccessScope::Instance,
        };
    }
    p
}

/// The publisher's QoS: partitions and PRESENTATION.
fn publisher_qos(o: &Options) -> PublisherQos {
    PublisherQos::default()
        .partition(o.partition.iter().cloned())
        .presentation(presentation(o))
}

/// The subscriber's QoS: partitions and PRESENTATION.
fn subscriber_qos(o: &Options) -> SubscriberQos {
    SubscriberQos::default()
        .partition(o.partition.iter().cloned())
        .presentation(presentation(o))
}

/// Prints an entity's failure to be created; "not supported" when Halyard lacks a feature.
fn creation_failed(what: &str, i: usize, topic: &str, e: &Error) -> i32 {
    println!("failed to create {what}[{i}] topic: {topic}: {e}");
    EXIT_INIT
}

/// Checks the QoS before any entity is announced, as `shape_main` configures QoS before it
/// creates them: what Halyard lacks is reported ("... not supported ...") ahead of the
/// creation lines, so the suite counts it as an unsupported feature.
fn check_qos(validation: halyard::Result<()>) -> Result<(), i32> {
    validation.map_err(|e| {
        println!("    {e}");
        EXIT_INIT
    })
}

/// One line per listener call, as `shape_main`'s participant listener prints them.
struct Printer {
    topic: String,
    /// The current count at the last matched call (for its `change`).
    matched: AtomicI64,
}

impl Printer {
    fn new(topic: &str) -> Arc<Printer> {
        Arc::new(Printer {
            topic: topic.to_string(),
            matched: AtomicI64::new(0),
        })
    }

    fn line(&self, func: &str, rest: &str) {
        println!(
            "{func}() topic: '{}'  type: 'ShapeType' : {rest}",
            self.topic
        );
    }

    fn matched_line(&self, func: &str, peers: &str, s: &MatchedStatus) {
        let now = s.current_count as i64;
        let change = now - self.matched.swap(now, Ordering::Relaxed);
        self.line(
            func,
            &format!("matched {peers} {} (change = {change})", s.current_count),
        );
    }

    fn incompatible_line(&self, func: &str, s: &IncompatibleQosStatus) {
        let (id, name) = s
            .last_policy_id
            .map_or((0, "UNKNOWN"), |p| (p as i32, p.name()));
        self.line(func, &format!("{id} ({name})"));
    }

    fn deadline_line(&self, func: &str, s: &DeadlineMissedStatus) {
        self.line(
            func,
            &format!(
                "(total = {}, change = {})",
                s.total_count, s.total_count_change
            ),
        );
    }
}

impl DataWriterListener for Printer {
    fn on_publication_matched(&self, s: MatchedStatus) {
        self.matched_line("on_publication_matched", "readers", &s);
    }
    fn on_offered_incompatible_qos(&self, s: IncompatibleQosStatus) {
        self.incompatible_line("on_offered_incompatible_qos", &s);
    }
    fn on_offered_deadline_missed(&self, s: DeadlineMissedStatus) {
        self.deadline_line("on_offered_deadline_missed", &s);
    }
    fn on_liveliness_lost(&self, s: LivelinessLostStatus) {
        self.line(
            "on_liveliness_lost",
            &format!(
                "(total = {}, change = {})",
                s.total_count, s.total_count_change
            ),
        );
    }
}

impl DataReaderListener for Printer {
    fn on_subscription_matched(&self, s: MatchedStatus) {
        self.matched_line("on_subscription_matched", "writers", &s);
    }
    fn on_requested_incompatible_qos(&self, s: IncompatibleQosStatus) {
        self.incompatible_line("on_requested_incompatible_qos", &s);
    }
    fn on_requested_deadline_missed(&self, s: DeadlineMissedStatus) {
        self.deadline_line("on_requested_deadline_missed", &s);
    }
    fn on_liveliness_changed(&self, s: LivelinessChangedStatus) {
        self.line(
            "on_liveliness_changed",
            &format!(
                "(alive = {}, not_alive = {})",
                s.alive_count, s.not_alive_count
            ),
        );
    }
}

/// The sample line: `%-10s %-10s %03d %03d [%d]` and ` {last payload byte}`.
fn sample_line(topic: &str, s: &ShapeType) -> String {
    let mut line = format!(
        "{topic:<10} {:<10} {:03} {:03} [{}]",
        s.color.as_str(),
        s.x,
        s.y,
        s.shapesize
    );
    if let Some(last) = s.additional_payload_size.last() {
        line.push_str(&format!(" {{{last}}}"));
    }
    line
}

/// A small generator for the start position and velocity (as `random()` does there).
struct Random(u64);

impl Random {
    fn next(&mut self) -> i32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 33) as i32
    }
}

/// Sleeps `ms`, waking early on SIGINT.
fn pause(ms: u64) {
    let end = std::time::Instant::now() + Duration::from_millis(ms);
    while !INTERRUPTED.load(Ordering::SeqCst) {
        let now = std::time::Instant::now();
        if now >= end {
            break;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(20)));
    }
}

fn publish(o: &Options, dp: &DomainParticipant, topics: &[halyard::Topic<ShapeType>]) -> i32 {
    let color = o.color.clone().unwrap_or_else(|| "BLUE".into());
    let publisher = dp.create_publisher(publisher_qos(o));
    let mut wq = DataWriterQos::default().copy_from_topic_qos(&common_qos(o));
    if o.strength != -1 {
        wq.ownership_strength = o.strength as i32;
    }
    if o.lifespan_ms > 0 {
        wq.lifespan = ms(o.lifespan_ms);
    }
    if o.final_state == Some('u') {
        wq.writer_data_lifecycle.autodispose_unregistered_instances = false;
    }
    if wq.durability >= Durability::Transient {
        // Durable shapes outlive the publisher: leaving unregisters them (disposing would
        // have the durability service purge them), and the service keeps as much history as
        // the writer.
        if o.final_state != Some('d') {
            wq.writer_data_lifecycle.autodispose_unregistered_instances = false;
        }
        wq.durability_service.history = wq.history;
        let mut service = wq.durability_service.into();
        o.service.apply(&mut service);
        wq.durability_service = service.into();
    }
    if let Err(code) = check_qos(wq.validate()) {
        return code;
    }
    let mut writers: Vec<(&str, DataWriter<ShapeType>)> = Vec::new();
    for (i, t) in topics.iter().enumerate() {
        println!("Create writer for topic: {} color: {color}", t.name());
        let listener: Arc<dyn DataWriterListener> = Printer::new(t.name());
        match publisher.create_datawriter_with_listener(t, wq.clone(), Some(listener)) {
            Ok(w) => writers.push((t.name(), w)),
            Err(e) => return creation_failed("datawriter", i, t.name(), &e),
        }
    }
    let seed = halyard::wall_clock().to_nanos() as u64 | 1;
    let mut rng = Random(seed);
    let mut shape = ShapeType {
        color: BoundedString::default(),
        x: rng.next() % WIDTH,
        y: rng.next() % HEIGHT,
        shapesize: o.shapesize as i32,
        additional_payload_size: vec![255; o.additional_payload_size as usize],
    };
    let velocity = |rng: &mut Random| {
        let v = rng.next() % 5 + 1;
        if rng.next() % 2 == 1 {
            -v
        } else {
            v
        }
    };
    let (mut xvel, mut yvel) = (velocity(&mut rng), velocity(&mut rng));
    let instance_color = |j: u64| {
        BoundedString(if j == 0 {
            color.clone()
        } else {
            format!("{color}{j}")
        })
    };
    let longest = instance_color(o.num_instances.saturating_sub(1));
    if longest.len() > 128 {
        println!(
            "color {:?} is longer than the 128 bytes of ShapeType's string<128>",
            longest.as_str()
        );
        return EXIT_INIT;
    }
    let sets = (o.coherent || o.ordered) && o.coherent_sample_count > 0;
    let count = o.coherent_sample_count.max(1);
    let mut n = 0u64;
    while !INTERRUPTED.load(Ordering::SeqCst) {
        if sets && n.is_multiple_of(count) {
            println!("Started Coherent Set");
            if let Err(e) = publisher.begin_coherent_changes() {
                println!("begin_coherent_changes failed: {e}");
            }
        }
        shape.x += xvel;
        shape.y += yvel;
        if shape.x < 0 {
            shape.x = 0;
            xvel = -xvel;
        }
        if shape.x > WIDTH {
            shape.x = WIDTH;
            xvel = -xvel;
        }
        if shape.y < 0 {
            shape.y = 0;
            yvel = -yvel;
        }
        if shape.y > HEIGHT {
            shape.y = HEIGHT;
            yvel = -yvel;
        }
        if o.shapesize == 0 {
            shape.shapesize = if o.size_modulo > 0 {
                (shape.shapesize % o.size_modulo as i32) + 1
            } else {
                shape.shapesize + 1
            };
        }
        for (topic, w) in &writers {
            for j in 0..o.num_instances {
                shape.color = instance_color(j);
                if let Err(e) = w.write(&shape) {
                    println!("write failed: {e}");
                }
                if o.print_writes {
                    println!("{}", sample_line(topic, &shape));
                }
            }
        }
        if sets && n % count == count - 1 {
            println!("Finished Coherent Set");
            if let Err(e) = publisher.end_coherent_changes() {
                println!("end_coherent_changes failed: {e}");
            }
        }
        pause(o.write_period_ms);
        n += 1;
        if o.num_iterations > 0 && n >= o.num_iterations {
            break;
        }
    }
    if let Some(action) = o.final_state {
        for (_, w) in &writers {
            for j in 0..o.num_instances {
                shape.color = instance_color(j);
                let r = if action == 'u' {
                    w.unregister_instance(&shape)
                } else {
                    w.dispose(&shape)
                };
                if let Err(e) = r {
                    println!("final instance state change failed: {e}");
                }
            }
        }
    }
    for (_, w) in &writers {
        let _ = w.wait_for_acknowledgments(Duration::from_secs(1));
    }
    EXIT_OK
}

fn subscribe(o: &Options, dp: &DomainParticipant, topics: &[halyard::Topic<ShapeType>]) -> i32 {
    let subscriber = dp.create_subscriber(subscriber_qos(o));
    let mut rq = DataReaderQos::default().copy_from_topic_qos(&common_qos(o));
    if o.time_filter_ms > 0 {
        rq.time_based_filter = ms(o.time_filter_ms);
    }
    if let Err(code) = check_qos(rq.validate()) {
        return code;
    }
    let filter = match (&o.color, &o.cft) {
        (Some(c), _) => Some(("color = %0".to_string(), vec![format!("'{c}'")])),
        (None, Some(expr)) => Some((expr.clone(), Vec::new())),
        (None, None) => None,
    };
    let mut readers: Vec<(String, DataReader<ShapeType>)> = Vec::new();
    for (i, t) in topics.iter().enumerate() {
        let created = match &filter {
            None => {
                println!("Create reader for topic: {}", t.name());
                let listener: Arc<dyn DataReaderListener> = Printer::new(t.name());
                subscriber
                    .create_datareader_with_listener(t, rq.clone(), Some(listener))
                    .map(|r| (t.name().to_string(), r))
            }
            Some((expr, params)) => {
                let name = format!("{}_filtered", t.name());
                let cft = match dp.create_contentfilteredtopic(&name, t, expr, params.clone()) {
                    Ok(c) => c,
                    Err(e) => {
                        println!("failed to create content filtered topic: {e}");
                        return EXIT_INIT;
                    }
                };
                println!("Create reader for topic: {name}");
                let listener: Arc<dyn DataReaderListener> = Printer::new(&name);
                subscriber
                    .create_datareader_filtered(&cft, rq.clone(), Some(listener))
                    .map(|r| (name, r))
            }
        };
        match created {
            Ok(r) => readers.push(r),
            Err(e) => return creation_failed("datareader", i, t.name(), &e),
        }
    }
    // Instance handle -> color, from the valid samples seen (a disposal or unregistration
    // carries no data to name its instance by).
    let mut colors: BTreeMap<InstanceHandle, String> = BTreeMap::new();
    let mut n = 0u64;
    let access = o.coherent || o.ordered;
    while !INTERRUPTED.load(Ordering::SeqCst) {
        if o.coherent {
            println!("Reading coherent sets, iteration {n}");
        }
        if o.ordered {
            println!("Reading with ordered access, iteration {n}");
        }
        if access {
            if let Err(e) = subscriber.begin_access() {
                println!("begin_access failed: {e}");
            }
        }
        for (name, r) in &readers {
            read_all(o, name, r, &mut colors);
        }
        if access {
            if let Err(e) = subscriber.end_access() {
                println!("end_access failed: {e}");
            }
        }
        n += 1;
        if o.num_iterations > 0 && n >= o.num_iterations {
            break;
        }
        pause(o.read_period_ms);
    }
    EXIT_OK
}

/// One read period of one reader: instance by instance (`take_next_instance`, or
/// `read_next_instance` with -R), or everything at once with --take-read.
fn read_all(
    o: &Options,
    name: &str,
    r: &DataReader<ShapeType>,
    colors: &mut BTreeMap<InstanceHandle, String>,
) {
    let sel = Selector::default();
    let mut previous: Option<InstanceHandle> = None;
    loop {
        let got = match (o.take_read, o.use_read) {
            (true, true) => r.read(usize::MAX),
            (true, false) => r.take(usize::MAX),
            (false, true) => r.read_next_instance(usize::MAX, previous, sel),
            (false, false) => r.take_next_instance(usize::MAX, previous, sel),
        };
        let samples = match got {
            Ok(s) if !s.is_empty() => s,
            Ok(_) => return,
            Err(e) => {
                println!("read failed: {e}");
                return;
            }
        };
        for s in &samples {
            let handle = s.info.instance_handle;
            if let Some(d) = s.data.as_ref().filter(|_| s.info.valid_data) {
                println!("{}", sample_line(name, d));
                colors.insert(handle, d.color.0.clone());
            }
            let state = match s.info.instance_state {
                InstanceState::Alive => continue,
                InstanceState::NotAliveDisposed => "NOT_ALIVE_DISPOSED_INSTANCE_STATE",
                InstanceState::NotAliveNoWriters => "NOT_ALIVE_NO_WRITERS_INSTANCE_STATE",
            };
            let color = colors.get(&handle).map_or("?", String::as_str);
            println!("{name:<10} {color:<10} {state}");
        }
        if o.take_read {
            // read()/take() return everything at once.
            return;
        }
        previous = samples.first().map(|s| s.info.instance_handle);
    }
}
