import DriverProtocol
import NIOCore

/// A dialect file's answer template (sign-in, refresh, `resources`)
/// compiled once into JSON bytes with holes for its placeholders, so an
/// answer is written in one pass instead of built as a `JSONValue` tree and
/// encoded (which made a file's refresh about 15 % dearer than its Swift
/// version), and a resource's own JSON goes into `{data}` as it was encoded.
/// Keys are sorted, as `JSONResponse` sorts them.
struct CompiledTemplate: Sendable {
    private enum Piece: Sendable {
        case bytes([UInt8])
        /// A placeholder as a whole JSON value, or its text as a string (`{expires_in:string}`).
        case value(Placeholder, asString: Bool)
        /// A placeholder inside a string's text.
        case text(Placeholder)
    }

    private let pieces: [Piece]
    /// Placeholders that stand as a whole member: one without a value leaves
    /// its member out, which only the tree renderer does.
    private let members: [Placeholder]

    init(_ template: Template) {
        var pieces: [Piece] = []
        var members: [Placeholder] = []
        var pending: [UInt8] = []
        func flush() {
            if !pending.isEmpty { pieces.append(.bytes(pending)) }
            pending = []
        }
        func write(_ template: Template) {
            switch template {
            case .value(let value):
                pending += Array(JSONResponse.bytes(value).readableBytesView)
            case .placeholder(let placeholder, let asString):
                flush()
                pieces.append(.value(placeholder, asString: asString))
            case .text(let parts):
                pending.append(UInt8(ascii: "\""))
                for part in parts {
                    switch part {
                    case .literal(let text): Self.escape(text, into: &pending)
                    case .placeholder(let placeholder):
                        flush()
                        pieces.append(.text(placeholder))
                    }
                }
                pending.append(UInt8(ascii: "\""))
            case .object(let object):
                pending.append(UInt8(ascii: "{"))
                for (index, key) in object.keys.sorted().enumerated() {
                    if index > 0 { pending.append(UInt8(ascii: ",")) }
                    pending.append(UInt8(ascii: "\""))
                    Self.escape(key, into: &pending)
                    pending += Array("\":".utf8)
                    let member = object[key]!
                    if case .placeholder(let placeholder, _) = member { members.append(placeholder) }
                    write(member)
                }
                pending.append(UInt8(ascii: "}"))
            case .array(let items):
                pending.append(UInt8(ascii: "["))
                for (index, item) in items.enumerated() {
                    if index > 0 { pending.append(UInt8(ascii: ",")) }
                    write(item)
                }
                pending.append(UInt8(ascii: "]"))
            }
        }
        write(template)
        flush()
        self.pieces = pieces
        self.members = members
    }

    /// The answer's bytes, or nil when a member must be left out (a refresh
    /// token not issued) or a value is neither a string nor a whole number:
    /// the caller renders the tree then.
    func render(_ values: (Placeholder) -> JSONValue) -> ByteBuffer? {
        for placeholder in members where values(placeholder) == .null { return nil }
        var out = ByteBuffer()
        out.reserveCapacity(1024)
        for piece in pieces {
            switch piece {
            case .bytes(let bytes): out.writeBytes(bytes)
            case .value(let placeholder, let asString):
                switch values(placeholder) {
                case .string(let text): Self.quoted(text, into: &out)
                case .integer(let number):
                    if asString { Self.quoted(String(number), into: &out) } else { out.writeString(String(number)) }
                default: return nil
                }
            case .text(let placeholder):
                var escaped: [UInt8] = []
                Self.escape(values(placeholder).text, into: &escaped)
                out.writeBytes(escaped)
            }
        }
        return out
    }

    /// The template around JSON already encoded (a resource's answer in a
    /// `resources` template's `{data}`); nil if it has another placeholder.
    func render(_ json: ByteBuffer, as placeholder: Placeholder) -> ByteBuffer? {
        var out = ByteBuffer()
        out.reserveCapacity(json.readableBytes + 64)
        for piece in pieces {
            switch piece {
            case .bytes(let bytes): out.writeBytes(bytes)
            case .value(placeholder, asString: false): out.writeImmutableBuffer(json)
            default: return nil
            }
        }
        return out
    }

    private static func quoted(_ text: String, into out: inout ByteBuffer) {
        var escaped: [UInt8] = [UInt8(ascii: "\"")]
        escape(text, into: &escaped)
        escaped.append(UInt8(ascii: "\""))
        out.writeBytes(escaped)
    }

    /// A JSON string's content (RFC 8259 section 7): quotes, backslashes and
    /// control characters escaped, everything else as its UTF-8.
    static func escape(_ text: String, into out: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0x00..<0x20: out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            default: out.append(byte)
            }
        }
    }
}
