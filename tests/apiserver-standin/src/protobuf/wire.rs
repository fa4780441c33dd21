//! The protobuf wire format: varints, tags and length-delimited fields, with the error texts of
//! gogo/protobuf's generated `Unmarshal` (what kube-apiserver answers a bad body with).

/// A decode failure, worded as Go's generated code words it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("unexpected EOF")]
    UnexpectedEof,
    #[error("proto: integer overflow")]
    Overflow,
    #[error("proto: negative length found during unmarshaling")]
    NegativeLength,
    #[error("proto: illegal tag 0 (wire type {0})")]
    IllegalTag(u8),
    #[error("proto: {message}: wiretype end group for non-group")]
    EndGroup { message: String },
    #[error("proto: wrong wireType = {wire} for field {field}")]
    WrongWireType { wire: u8, field: String },
    #[error("proto: illegal wireType {0}")]
    IllegalWireType(u8),
    #[error("{0}")]
    Invalid(String),
}

/// One field as read off the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
    Fixed32(u32),
}

/// Reads fields from a buffer.
pub struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf }
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub fn varint(&mut self) -> Result<u64, WireError> {
        let mut out: u64 = 0;
        for shift in (0..64).step_by(7) {
            let (&b, rest) = self.buf.split_first().ok_or(WireError::UnexpectedEof)?;
            self.buf = rest;
            out |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(out);
            }
        }
        Err(WireError::Overflow)
    }

    pub fn fixed64(&mut self) -> Result<u64, WireError> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(
            b.try_into().map_err(|_| WireError::UnexpectedEof)?,
        ))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if n > self.buf.len() {
            return Err(WireError::UnexpectedEof);
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }

    /// The next `(field number, wire type, value)`; `message` names the type in errors.
    pub fn field(&mut self, message: &str) -> Result<(u32, u8, Value<'a>), WireError> {
        let key = self.varint()?;
        let wire = (key & 7) as u8;
        let number = u32::try_from(key >> 3).map_err(|_| WireError::Overflow)?;
        if number == 0 {
            return Err(WireError::IllegalTag(wire));
        }
        let value = match wire {
            0 => Value::Varint(self.varint()?),
            1 => Value::Fixed64(self.fixed64()?),
            2 => {
                let len = self.varint()?;
                let len = usize::try_from(len).map_err(|_| WireError::NegativeLength)?;
                if len > i32::MAX as usize {
                    return Err(WireError::NegativeLength);
                }
                Value::Bytes(self.take(len)?)
            }
            4 => {
                return Err(WireError::EndGroup {
                    message: message.to_string(),
                });
            }
            5 => {
                let b = self.take(4)?;
                Value::Fixed32(u32::from_le_bytes(
                    b.try_into().map_err(|_| WireError::UnexpectedEof)?,
                ))
            }
            other => return Err(WireError::IllegalWireType(other)),
        };
        Ok((number, wire, value))
    }
}
