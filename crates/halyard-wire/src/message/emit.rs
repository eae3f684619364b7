//! Emission of RTPS messages (always little-endian, every submessage padded to 4 bytes).

use super::*;

impl MessageBuilder {
    /// Starts a message in `buf` (cleared first) with the given header.
    pub fn new(mut buf: Vec<u8>, header: &Header) -> MessageBuilder {
        buf.clear();
        buf.extend_from_slice(b"RTPS");
        buf.extend_from_slice(&[header.version.major, header.version.minor]);
        buf.extend_from_slice(&header.vendor.0);
        buf.extend_from_slice(&header.guid_prefix.0);
        MessageBuilder { buf }
    }
    /// Bytes written so far (header included).
    pub fn len(&self) -> usize {
        self.buf.len()
    }
    /// True if only the header has been written.
    pub fn is_empty(&self) -> bool {
        self.buf.len() <= HEADER_LEN
    }
    /// Truncates back to `len` bytes (undoes submessages pushed after a `len()` snapshot).
    pub fn truncate(&mut self, len: usize) {
        self.buf.truncate(len.max(HEADER_LEN))
    }
    /// The message bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }
    /// Finishes, returning the buffer.
    pub fn finish(self) -> Vec<u8> {
        self.buf
    }

    /// Writes a submessage header (E flag set, length fixed by [`Self::end`]); returns the body start.
    fn begin(&mut self, sid: u8, flags: u8) -> usize {
        self.buf.extend_from_slice(&[sid, flags | 1, 0, 0]);
        self.buf.len()
    }
    /// Pads the body started at `start` to 4 bytes and sets octetsToNextHeader.
    ///
    /// A body longer than 65535 bytes gets octetsToNextHeader 0 ("to the end of the message"),
    /// which is only valid for the last submessage.
    fn end(&mut self, start: usize) {
        crate::param::pad4(&mut self.buf, start);
        let len = u16::try_from(self.buf.len() - start).unwrap_or(0);
        self.buf[start - 2..start].copy_from_slice(&len.to_le_bytes());
    }
    fn put(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }
    fn u16(&mut self, v: u16) {
        self.put(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.put(&v.to_le_bytes());
    }
    fn sn(&mut self, sn: SequenceNumber) {
        self.u32((sn.0 >> 32) as u32);
        self.u32(sn.0 as u32);
    }
    fn ids(&mut self, reader: EntityId, writer: EntityId) {
        self.put(&reader.0);
        self.put(&writer.0);
    }
    fn bitmap(&mut self, num_bits: u32, bitmap: &[u32; 8]) {
        let n = num_bits.min(256);
        self.u32(n);
        for w in bitmap.iter().take(n.div_ceil(32) as usize) {
            self.u32(*w);
        }
    }
    fn locators(&mut self, list: &[Locator]) {
        self.u32(list.len() as u32);
        for l in list {
            crate::param::put_locator(&mut self.buf, l);
        }
    }

    /// INFO_TS with a timestamp, or with the I flag when `None`.
    pub fn info_ts(&mut self, time: Option<Time>) {
        let s = self.begin(id::INFO_TS, if time.is_none() { 0x02 } else { 0 });
        if let Some(t) = time {
            self.u32(t.seconds as u32);
            self.u32(t.fraction);
        }
        self.end(s);
    }
    /// INFO_DST.
    pub fn info_dst(&mut self, prefix: GuidPrefix) {
        let s = self.begin(id::INFO_DST, 0);
        self.put(&prefix.0);
        self.end(s);
    }
    /// INFO_SRC.
    pub fn info_src(&mut self, src: &InfoSrc) {
        let s = self.begin(id::INFO_SRC, 0);
        self.u32(0);
        self.put(&[src.version.major, src.version.minor]);
        self.put(&src.vendor.0);
        self.put(&src.guid_prefix.0);
        self.end(s);
    }
    /// INFO_REPLY (M flag and multicast list when `reply.multicast` is non-empty).
    pub fn info_reply(&mut self, reply: &InfoReply) {
        let m = !reply.multicast.is_empty();
        let s = self.begin(id::INFO_REPLY, if m { 0x02 } else { 0 });
        self.locators(&reply.unicast);
        if m {
            self.locators(&reply.multicast);
        }
        self.end(s);
    }
    /// DATA (RTPS 2.5 §9.4.5.3), from the same struct the parser yields. `d.inline_qos` is a
    /// little-endian parameter list ending in PID_SENTINEL (every message Halyard emits is
    /// little-endian; see [`crate::param::ParameterListWriter`]); `d.payload` is the serialized
    /// payload including its encapsulation header.
    pub fn data(&mut self, d: &Data<'_>) {
        debug_assert!(
            d.inline_qos.is_none_or(|q| q.little_endian),
            "inline QoS must be little-endian, like the message"
        );
        let n = if d.non_standard_flag { 0x10 } else { 0 };
        let flags = data_flags(d.inline_qos.is_some(), d.payload.is_some(), d.key_flag, 0x04, 0x08);
        let s = self.begin(id::DATA, flags | n);
        self.u16(0);
        self.u16(16);
        self.ids(d.reader_id, d.writer_id);
        self.sn(d.writer_sn);
        self.put(d.inline_qos.map_or(&[][..], |q| q.bytes));
        self.put(d.payload.unwrap_or(&[]));
        self.end(s);
    }
    /// DATA_FRAG (RTPS 2.5 §9.4.5.4): `d.payload` holds `d.fragments_in_submessage` fragments
    /// from `d.fragment_starting_num`, each `d.fragment_size` long but possibly the last.
    /// `d.inline_qos` as for [`Self::data`].
    pub fn data_frag(&mut self, d: &DataFrag<'_>) {
        debug_assert!(
            d.inline_qos.is_none_or(|q| q.little_endian),
            "inline QoS must be little-endian, like the message"
        );
        debug_assert!(
            d.payload.len() <= d.fragments_in_submessage as usize * d.fragment_size as usize,
            "a DATA_FRAG carries at most fragments_in_submessage fragments"
        );
        let flags = data_flags(d.inline_qos.is_some(), true, d.key_flag, 0, 0x04);
        let s = self.begin(id::DATA_FRAG, flags);
        self.u16(0);
        self.u16(28);
        self.ids(d.reader_id, d.writer_id);
        self.sn(d.writer_sn);
        self.u32(d.fragment_starting_num);
        self.u16(d.fragments_in_submessage);
        self.u16(d.fragment_size);
        self.u32(d.sample_size);
        self.put(d.inline_qos.map_or(&[][..], |q| q.bytes));
        self.put(d.payload);
        self.end(s);
    }
    /// HEARTBEAT.
    pub fn heartbeat(&mut self, hb: &Heartbeat) {
        let flags =
            if hb.final_flag { 0x02 } else { 0 } | if hb.liveliness_flag { 0x04 } else { 0 };
        let s = self.begin(id::HEARTBEAT, flags);
        self.ids(hb.reader_id, hb.writer_id);
        self.sn(hb.first_sn);
        self.sn(hb.last_sn);
        self.u32(hb.count as u32);
        self.end(s);
    }
    /// HEARTBEAT_FRAG.
    pub fn heartbeat_frag(&mut self, hb: &HeartbeatFrag) {
        let s = self.begin(id::HEARTBEAT_FRAG, 0);
        self.ids(hb.reader_id, hb.writer_id);
        self.sn(hb.writer_sn);
        self.u32(hb.last_fragment_num);
        self.u32(hb.count as u32);
        self.end(s);
    }
    /// ACKNACK (numBits words only are written).
    pub fn acknack(&mut self, an: &AckNack) {
        let s = self.begin(id::ACKNACK, if an.final_flag { 0x02 } else { 0 });
        self.acknack_body(an);
        self.end(s);
    }
    fn acknack_body(&mut self, an: &AckNack) {
        self.ids(an.reader_id, an.writer_id);
        self.sn(an.reader_sn_state.base);
        self.bitmap(an.reader_sn_state.num_bits, &an.reader_sn_state.bitmap);
        self.u32(an.count as u32);
    }
    /// Halyard's NACK (vendor-specific; only meaningful in messages whose header names
    /// Halyard's vendor id): the body of an ACKNACK, naming changes, acknowledging none
    /// ([`AckNack::parse_halyard_nack`]).
    pub fn halyard_nack(&mut self, an: &AckNack) {
        let s = self.begin(id::HALYARD_NACK, 0);
        self.acknack_body(an);
        self.end(s);
    }
    /// NACK_FRAG.
    pub fn nack_frag(&mut self, nf: &NackFrag) {
        let s = self.begin(id::NACK_FRAG, 0);
        self.ids(nf.reader_id, nf.writer_id);
        self.sn(nf.writer_sn);
        self.u32(nf.fragment_number_state.base);
        self.bitmap(nf.fragment_number_state.num_bits, &nf.fragment_number_state.bitmap);
        self.u32(nf.count as u32);
        self.end(s);
    }
    /// GAP.
    pub fn gap(&mut self, gap: &Gap) {
        let s = self.begin(id::GAP, 0);
        self.ids(gap.reader_id, gap.writer_id);
        self.sn(gap.gap_start);
        self.sn(gap.gap_list.base);
        self.bitmap(gap.gap_list.num_bits, &gap.gap_list.bitmap);
        self.end(s);
    }
    /// Halyard's reception report (vendor-specific; only meaningful in messages whose header
    /// names Halyard's vendor id).
    pub fn reception_report(&mut self, r: &ReceptionReport) {
        let s = self.begin(id::HALYARD_RECEPTION_REPORT, 0);
        self.ids(r.reader_id, r.writer_id);
        self.u32(r.count as u32);
        self.u32(r.interval_us);
        self.u32(r.bytes);
        self.u32(r.complete);
        self.u32(r.lost);
        self.end(s);
    }
    /// A vendor-specific submessage with a raw body (`flags` bit 0, little-endian, is set
    /// whatever `flags` says: the body must be little-endian).
    pub fn vendor(&mut self, id: u8, flags: u8, body: &[u8]) {
        debug_assert!(id >= id::VENDOR_SPECIFIC_FIRST, "not a vendor-specific id");
        let s = self.begin(id, flags & !1);
        self.put(body);
        self.end(s);
    }
    /// PAD of `len` bytes of body (rounded up to a multiple of 4).
    pub fn pad(&mut self, len: usize) {
        let s = self.begin(id::PAD, 0);
        self.buf.resize(self.buf.len() + len, 0);
        self.end(s);
    }
}

/// Flags of DATA / DATA_FRAG: Q=0x02, plus `d` when a non-key payload is present and `k`
/// for a key payload (DATA_FRAG always carries a payload and has no D flag).
fn data_flags(q: bool, payload: bool, key: bool, d: u8, k: u8) -> u8 {
    let q = if q { 0x02 } else { 0 };
    match (payload, key) {
        (false, _) => q,
        (true, false) => q | d,
        (true, true) => q | k,
    }
}
