//! Parsing of the RTPS header and of every submessage (RTPS 2.5 §9.4), in either byte order.

use super::*;

/// Splits a message into its checked header and the submessage bytes.
pub(super) fn header(bytes: &[u8]) -> Result<(Header, &[u8]), WireError> {
    let (Some(h), Some(body)) = (bytes.get(..HEADER_LEN), bytes.get(HEADER_LEN..)) else {
        return Err(WireError::Truncated);
    };
    if &h[..4] != b"RTPS" {
        return Err(WireError::BadMagic);
    }
    if h[4] != 2 {
        return Err(WireError::UnsupportedVersion);
    }
    let mut prefix = [0u8; 12];
    prefix.copy_from_slice(&h[8..20]);
    let header = Header {
        version: ProtocolVersion { major: h[4], minor: h[5] },
        vendor: VendorId([h[6], h[7]]),
        guid_prefix: GuidPrefix(prefix),
    };
    Ok((header, body))
}

impl<'a> Iterator for Submessages<'a> {
    type Item = Result<Submessage<'a>, WireError>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let result = self.split_next().and_then(|(sid, flags, body)| submessage(sid, flags, body));
        if result.is_err() {
            self.rest = &[];
        }
        Some(result)
    }
}

impl<'a> Submessages<'a> {
    /// Takes the next submessage header and body off `rest`.
    pub(super) fn split_next(&mut self) -> Result<(u8, u8, &'a [u8]), WireError> {
        let rest = self.rest;
        let (Some(h), Some(after)) = (rest.get(..4), rest.get(4..)) else {
            return Err(WireError::Truncated);
        };
        let (sid, flags) = (h[0], h[1]);
        let raw = [h[2], h[3]];
        let len = if flags & 1 != 0 { u16::from_le_bytes(raw) } else { u16::from_be_bytes(raw) };
        let len = match (len, sid) {
            (0, id::PAD | id::INFO_TS) => 0,
            (0, _) => after.len(),
            (n, _) => n as usize,
        };
        let body = after.get(..len).ok_or(WireError::BadSubmessageLength)?;
        self.rest = &after[len..];
        Ok((sid, flags, body))
    }
}

/// A bounds-checked reader over a submessage body.
pub(super) struct Cursor<'a> {
    bytes: &'a [u8],
    le: bool,
}

impl<'a> Cursor<'a> {
    /// Reads `bytes` in the given byte order.
    pub(super) fn new(bytes: &'a [u8], le: bool) -> Self {
        Cursor { bytes, le }
    }
    /// The next `n` bytes.
    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        let (Some(head), Some(tail)) = (self.bytes.get(..n), self.bytes.get(n..)) else {
            return Err(WireError::Truncated);
        };
        self.bytes = tail;
        Ok(head)
    }
    /// The unread bytes.
    fn rest(&self) -> &'a [u8] {
        self.bytes
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    fn u16(&mut self) -> Result<u16, WireError> {
        let a = self.array::<2>()?;
        Ok(if self.le { u16::from_le_bytes(a) } else { u16::from_be_bytes(a) })
    }
    fn u32(&mut self) -> Result<u32, WireError> {
        let a = self.array::<4>()?;
        Ok(if self.le { u32::from_le_bytes(a) } else { u32::from_be_bytes(a) })
    }
    fn i32(&mut self) -> Result<i32, WireError> {
        self.u32().map(|v| v as i32)
    }
    fn entity(&mut self) -> Result<EntityId, WireError> {
        self.array::<4>().map(EntityId)
    }
    fn prefix(&mut self) -> Result<GuidPrefix, WireError> {
        self.array::<12>().map(GuidPrefix)
    }
    fn sn(&mut self) -> Result<SequenceNumber, WireError> {
        let high = self.i32()? as i64;
        let low = self.u32()? as i64;
        Ok(SequenceNumber((high << 32) | low))
    }
    /// A bitmap of ceil(num_bits/32) words; bits at or beyond num_bits are cleared.
    fn bitmap(&mut self, num_bits: u32) -> Result<[u32; 8], WireError> {
        if num_bits > 256 {
            return Err(WireError::InvalidField("numBits > 256"));
        }
        let mut bitmap = [0u32; 8];
        let words = num_bits.div_ceil(32) as usize;
        for (i, w) in bitmap.iter_mut().take(words).enumerate() {
            let valid = num_bits - 32 * i as u32;
            let mask = if valid >= 32 { u32::MAX } else { !(u32::MAX >> valid) };
            *w = self.u32()? & mask;
        }
        Ok(bitmap)
    }
    fn sn_set(&mut self) -> Result<SequenceNumberSet, WireError> {
        let base = self.sn()?;
        if base.0 < 1 {
            return Err(WireError::InvalidField("sequence number set base < 1"));
        }
        let num_bits = self.u32()?;
        let bitmap = self.bitmap(num_bits)?;
        Ok(SequenceNumberSet { base, num_bits, bitmap })
    }
    fn frag_set(&mut self) -> Result<FragmentNumberSet, WireError> {
        let base = self.u32()?;
        if base < 1 {
            return Err(WireError::InvalidField("fragment number set base < 1"));
        }
        let num_bits = self.u32()?;
        let bitmap = self.bitmap(num_bits)?;
        Ok(FragmentNumberSet { base, num_bits, bitmap })
    }
    /// Locator_t: kind, port, 16-byte address.
    fn locator(&mut self) -> Result<Locator, WireError> {
        let kind = self.i32()?;
        let port = self.u32()?;
        let address = self.array::<16>()?;
        Ok(Locator { kind, port, address })
    }
    /// u32 count then that many Locator_t, keeping at most MAX_REPLY_LOCATORS.
    fn locator_list(&mut self) -> Result<Vec<Locator>, WireError> {
        let count = self.u32()?;
        let mut v = Vec::new();
        for _ in 0..count {
            let l = self.locator()?;
            if v.len() < MAX_REPLY_LOCATORS {
                v.push(l);
            }
        }
        Ok(v)
    }
    /// LocatorUDPv4_t: address u32, port u32.
    fn locator_udpv4(&mut self) -> Result<Locator, WireError> {
        let addr = self.u32()?;
        let port = self.u32()?;
        let mut address = [0u8; 16];
        address[12..].copy_from_slice(&addr.to_be_bytes());
        Ok(Locator { kind: Locator::KIND_UDPV4, port, address })
    }
}

/// Parses one submessage body.
fn submessage(sid: u8, flags: u8, body: &[u8]) -> Result<Submessage<'_>, WireError> {
    let mut c = Cursor::new(body, flags & 1 != 0);
    Ok(match sid {
        id::DATA => Submessage::Data(data(&mut c, flags)?),
        id::DATA_FRAG => Submessage::DataFrag(data_frag(&mut c, flags)?),
        id::HEARTBEAT => Submessage::Heartbeat(heartbeat(&mut c, flags)?),
        id::HEARTBEAT_FRAG => Submessage::HeartbeatFrag(HeartbeatFrag {
            reader_id: c.entity()?,
            writer_id: c.entity()?,
            writer_sn: c.sn()?,
            last_fragment_num: c.u32()?,
            count: c.i32()?,
        }),
        id::ACKNACK => Submessage::AckNack(acknack_body(&mut c, flags & 0x02 != 0)?),
        id::NACK_FRAG => Submessage::NackFrag(NackFrag {
            reader_id: c.entity()?,
            writer_id: c.entity()?,
            writer_sn: c.sn()?,
            fragment_number_state: c.frag_set()?,
            count: c.i32()?,
        }),
        id::GAP => Submessage::Gap(gap(&mut c)?),
        vendor if vendor >= id::VENDOR_SPECIFIC_FIRST => {
            Submessage::Vendor { id: vendor, flags, body }
        }
        _ => info_submessage(sid, flags, &mut c)?,
    })
}

/// The body of an ACKNACK (its F flag given).
fn acknack_body(c: &mut Cursor<'_>, final_flag: bool) -> Result<AckNack, WireError> {
    Ok(AckNack {
        reader_id: c.entity()?,
        writer_id: c.entity()?,
        reader_sn_state: c.sn_set()?,
        count: c.i32()?,
        final_flag,
    })
}

/// The body of Halyard's NACK: an ACKNACK's.
pub(super) fn halyard_nack(flags: u8, body: &[u8]) -> Result<AckNack, WireError> {
    acknack_body(&mut Cursor::new(body, flags & 1 != 0), false)
}

/// The body of Halyard's reception report.
pub(super) fn reception_report(flags: u8, body: &[u8]) -> Result<ReceptionReport, WireError> {
    let mut c = Cursor::new(body, flags & 1 != 0);
    Ok(ReceptionReport {
        reader_id: c.entity()?,
        writer_id: c.entity()?,
        count: c.i32()?,
        interval_us: c.u32()?,
        bytes: c.u32()?,
        complete: c.u32()?,
        lost: c.u32()?,
    })
}

/// Parses the INFO_* and PAD submessages; anything else (below the vendor-specific range) is
/// `Unknown`.
fn info_submessage<'a>(
    sid: u8,
    flags: u8,
    c: &mut Cursor<'_>,
) -> Result<Submessage<'a>, WireError> {
    Ok(match sid {
        id::INFO_TS if flags & 0x02 != 0 => Submessage::InfoTs(None),
        id::INFO_TS => Submessage::InfoTs(Some(Time { seconds: c.i32()?, fraction: c.u32()? })),
        id::INFO_DST => Submessage::InfoDst(c.prefix()?),
        id::INFO_SRC => {
            c.u32()?;
            let v = c.array::<2>()?;
            Submessage::InfoSrc(InfoSrc {
                version: ProtocolVersion { major: v[0], minor: v[1] },
                vendor: VendorId(c.array::<2>()?),
                guid_prefix: c.prefix()?,
            })
        }
        id::INFO_REPLY => {
            let unicast = c.locator_list()?;
            let multicast = if flags & 0x02 != 0 { c.locator_list()? } else { Vec::new() };
            Submessage::InfoReply(InfoReply { unicast, multicast })
        }
        id::INFO_REPLY_IP4 => {
            let unicast = vec![c.locator_udpv4()?];
            let multicast = if flags & 0x02 != 0 { vec![c.locator_udpv4()?] } else { Vec::new() };
            Submessage::InfoReply(InfoReply { unicast, multicast })
        }
        id::PAD => Submessage::Pad,
        other => Submessage::Unknown { id: other },
    })
}

/// The inline QoS (if `q`) of a DATA or DATA_FRAG `body` and the bytes following it; the
/// inline QoS starts `4 + octetsToInlineQos` bytes from the start of the body.
/// `fixed` is the length of the fixed fields after octetsToInlineQos (16 for DATA, 28 for
/// DATA_FRAG); a smaller octetsToInlineQos is invalid.
fn inline_qos_and_rest<'a>(
    body: &'a [u8],
    (octets_to_inline_qos, fixed): (u16, u16),
    le: bool,
    q: bool,
) -> Result<(Option<ParameterList<'a>>, &'a [u8]), WireError> {
    let start = 4 + octets_to_inline_qos as usize;
    let after = body.get(start..).filter(|_| octets_to_inline_qos >= fixed);
    let after = after.ok_or(WireError::InvalidField("octetsToInlineQos"))?;
    if !q {
        return Ok((None, after));
    }
    let n = ParameterList::new(after, le).encoded_len()?;
    let (Some(list), Some(rest)) = (after.get(..n), after.get(n..)) else {
        return Err(WireError::BadParameterList);
    };
    Ok((Some(ParameterList::new(list, le)), rest))
}

/// DATA: Q=0x02, D=0x04, K=0x08, N=0x10.
fn data<'a>(c: &mut Cursor<'a>, flags: u8) -> Result<Data<'a>, WireError> {
    let body = c.rest();
    let _extra_flags = c.u16()?;
    let otiq = c.u16()?;
    let reader_id = c.entity()?;
    let writer_id = c.entity()?;
    let writer_sn = c.sn()?;
    let (inline_qos, rest) = inline_qos_and_rest(body, (otiq, 16), c.le, flags & 0x02 != 0)?;
    let key_flag = flags & 0x08 != 0;
    let payload = (flags & 0x04 != 0 || key_flag).then_some(rest);
    let non_standard_flag = flags & 0x10 != 0;
    Ok(Data { reader_id, writer_id, writer_sn, inline_qos, payload, key_flag, non_standard_flag })
}

/// DATA_FRAG: Q=0x02, K=0x04, N=0x08.
fn data_frag<'a>(c: &mut Cursor<'a>, flags: u8) -> Result<DataFrag<'a>, WireError> {
    let body = c.rest();
    let _extra_flags = c.u16()?;
    let otiq = c.u16()?;
    let reader_id = c.entity()?;
    let writer_id = c.entity()?;
    let writer_sn = c.sn()?;
    let fragment_starting_num = c.u32()?;
    let fragments_in_submessage = c.u16()?;
    let fragment_size = c.u16()?;
    let sample_size = c.u32()?;
    if fragment_starting_num < 1 {
        return Err(WireError::InvalidField("fragmentStartingNum < 1"));
    }
    if fragment_size == 0 {
        return Err(WireError::InvalidField("fragmentSize == 0"));
    }
    let offset = (fragment_starting_num as u64 - 1) * fragment_size as u64;
    if offset >= sample_size as u64 {
        return Err(WireError::InvalidField("fragment beyond sampleSize"));
    }
    let (inline_qos, payload) = inline_qos_and_rest(body, (otiq, 28), c.le, flags & 0x02 != 0)?;
    Ok(DataFrag {
        reader_id,
        writer_id,
        writer_sn,
        fragment_starting_num,
        fragments_in_submessage,
        fragment_size,
        sample_size,
        inline_qos,
        payload,
        key_flag: flags & 0x04 != 0,
    })
}

/// HEARTBEAT: F=0x02, L=0x04; firstSN >= 1 and lastSN >= firstSN - 1.
fn heartbeat(c: &mut Cursor<'_>, flags: u8) -> Result<Heartbeat, WireError> {
    let hb = Heartbeat {
        reader_id: c.entity()?,
        writer_id: c.entity()?,
        first_sn: c.sn()?,
        last_sn: c.sn()?,
        count: c.i32()?,
        final_flag: flags & 0x02 != 0,
        liveliness_flag: flags & 0x04 != 0,
    };
    if hb.first_sn.0 < 1 || hb.last_sn.0 < hb.first_sn.0 - 1 {
        return Err(WireError::InvalidField("heartbeat sequence number range"));
    }
    Ok(hb)
}

/// GAP: readerId, writerId, gapStart, gapList (trailing RTPS 2.4+ fields ignored).
fn gap(c: &mut Cursor<'_>) -> Result<Gap, WireError> {
    let reader_id = c.entity()?;
    let writer_id = c.entity()?;
    let gap_start = c.sn()?;
    if gap_start.0 < 1 {
        return Err(WireError::InvalidField("gapStart < 1"));
    }
    let gap_list = c.sn_set()?;
    Ok(Gap { reader_id, writer_id, gap_start, gap_list })
}
