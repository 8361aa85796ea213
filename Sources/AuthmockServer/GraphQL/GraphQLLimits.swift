import Foundation
import GraphQL
import OrderedCollections
import Synchronization

/// What one request to `/graphql` may cost, checked before it is validated,
/// its token judged or anything executed (docs/graphql.md "Limits"). Every
/// check is linear in the request, so a request over a limit costs less than
/// a normal query.
public enum GraphQLLimits {
    /// Lexical tokens in `query`: GraphQLSwift allocates a node per token.
    static let maxTokens = 5_000
    /// Brackets (`{`, `[`, `(`) open at once in `query`: GraphQLSwift's
    /// parser recurses per level, and a thousand levels overflow its stack.
    static let maxNesting = 64
    /// Object and list literals nested in `query` (an argument's or a
    /// variable default's value): GraphQLSwift prints a refused literal into
    /// its validation message at a cost that doubles with each level (depth
    /// 54: a second; 63: minutes), so a deeper literal is refused unparsed.
    static let maxLiteralNesting = 16
    /// Fields deep, through fragments (the introspection query GraphiQL and
    /// Apollo's code generators send is 13 deep).
    static let maxDepth = 24
    /// Fields the operation selects, aliases and fragment spreads expanded
    /// (each is resolved and answered: an alias flood is a memory flood).
    static let maxFields = 1_000
    /// Directives applied, fragment spreads expanded (each is evaluated per
    /// field it sits on).
    static let maxDirectives = 50
    /// JSON nesting of the request body or `variables`.
    static let maxInputDepth = 16
    /// JSON values in the request body or `variables`.
    static let maxInputValues = 2_000

    /// docs/graphql.md's table of the limits (a test compares them).
    public static var markdownTable: String {
        let rows = [
            ("\(maxTokens) tokens", "lexical tokens in `query` (names, punctuation, strings, numbers)"),
            ("\(maxNesting) brackets", "`{`, `[` and `(` open at once in `query` (the parser recurses per level)"),
            ("\(maxLiteralNesting) literal levels", "object and list literals nested in `query` (an argument's or a variable default's value)"),
            ("\(maxDepth) fields deep", "fields nested in the operation, through fragments"),
            ("\(maxFields) fields", "fields the operation selects, aliases and fragment spreads expanded"),
            ("\(maxDirectives) directives", "directives applied, fragment spreads expanded"),
            ("\(maxInputDepth) JSON levels", "nesting of the request body's JSON, `variables` included (GET: of `variables`)"),
            ("\(maxInputValues) JSON values", "values in the request body's JSON, `variables` included (GET: in `variables`)"),
        ]
        return (["| limit | what counts |", "| --- | --- |"] + rows.map { "| \($0.0) | \($0.1) |" }).joined(separator: "\n")
    }

    /// The problem with `query` for GraphQLSwift's parser, before it runs:
    /// too many tokens, or brackets nested too deep. Scans GraphQL's lexical
    /// grammar (strings, block strings, escapes, comments) the way its lexer
    /// does, so nothing the parser reads as a bracket is hidden in what this
    /// reads as a string.
    static func lexicalProblem(_ query: String) -> String? {
        var depth = 0, tokens = 0
        // Open brackets, true for a literal's (`{` after `:` or `=`, `[`, or inside a literal), and how many of those are open.
        var opened: [Bool] = []
        var literalDepth = 0
        var previous: UInt8 = 0
        let bytes = Array(query.utf8)
        var index = 0
        func at(_ offset: Int) -> UInt8? { index + offset < bytes.count ? bytes[index + offset] : nil }
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: ","):
                index += 1
                continue
            case UInt8(ascii: "#"):
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n"), bytes[index] != UInt8(ascii: "\r") { index += 1 }
                continue
            case quote where at(1) == quote && at(2) == quote:
                // A block string ends at the first `"""` not escaped as `\"""`.
                index += 3
                while index < bytes.count {
                    if bytes[index] == backslash, at(1) == quote, at(2) == quote, at(3) == quote {
                        index += 4
                    } else if bytes[index] == quote, at(1) == quote, at(2) == quote {
                        index += 3
                        break
                    } else {
                        index += 1
                    }
                }
            case quote:
                // A string ends at an unescaped `"`; the lexer refuses one
                // that reaches a line end, and nothing after that is parsed.
                index += 1
                while index < bytes.count {
                    let inner = bytes[index]
                    index += inner == backslash ? 2 : 1
                    if inner == quote || inner == UInt8(ascii: "\n") || inner == UInt8(ascii: "\r") { break }
                }
            case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "("):
                depth += 1
                if depth > maxNesting { return "the document nests deeper than \(maxNesting) brackets" }
                let literal =
                    byte != UInt8(ascii: "(")
                    && (opened.last == true || byte == UInt8(ascii: "[") || previous == UInt8(ascii: ":") || previous == UInt8(ascii: "="))
                opened.append(literal)
                if literal {
                    literalDepth += 1
                    if literalDepth > maxLiteralNesting { return "a literal value nests deeper than \(maxLiteralNesting) levels" }
                }
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: ")"):
                depth -= 1
                if opened.popLast() == true { literalDepth -= 1 }
                index += 1
            default:
                // A name or number is one token however long.
                if isWordByte(byte) {
                    while index < bytes.count, isWordByte(bytes[index]) { index += 1 }
                } else {
                    index += 1
                }
            }
            previous = byte
            tokens += 1
            if tokens > maxTokens { return "the document has more than \(maxTokens) tokens" }
        }
        return nil
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."):
            true
        default: false
        }
    }

    /// The problem with the chosen operation's size, fragments expanded:
    /// depth, fields and directives. Each fragment is measured once, so a
    /// fragment used a thousand times costs one measurement, and a cycle
    /// (which validation refuses afterwards) counts nothing twice.
    static func documentProblem(_ document: Document, operation: OperationDefinition) -> String? {
        var measure = DocumentMeasure(document: document)
        let cost = measure.selections(operation.selectionSet, level: 0)
        if measure.tooDeep || cost.depth > maxDepth { return "the operation selects fields more than \(maxDepth) deep" }
        if cost.fields > maxFields { return "the operation selects more than \(maxFields) fields (aliases and fragments expanded)" }
        if cost.directives + operation.directives.count > maxDirectives {
            return "the operation applies more than \(maxDirectives) directives (fragments expanded)"
        }
        return nil
    }
}

/// Depth, fields and directives of selection sets, fragments measured once.
private struct DocumentMeasure {
    struct Cost {
        var depth = 0, fields = 0, directives = 0

        /// Adds `other` beside this; sums saturate, so a fragment bomb is
        /// "over the limit", never an overflow.
        mutating func add(_ other: Cost) {
            depth = max(depth, other.depth)
            fields = min(fields &+ other.fields, Int.max / 2)
            directives = min(directives &+ other.directives, Int.max / 2)
        }
    }

    let fragments: [String: FragmentDefinition]
    var measured: [String: Cost] = [:]
    var measuring: Set<String> = []
    /// Set when selection sets and spreads nest deeper than any allowed
    /// document could: the walk stops there (it recurses per level).
    var tooDeep = false

    init(document: Document) {
        var fragments: [String: FragmentDefinition] = [:]
        for case let fragment as FragmentDefinition in document.definitions where fragments[fragment.name.value] == nil {
            fragments[fragment.name.value] = fragment
        }
        self.fragments = fragments
    }

    mutating func selections(_ set: SelectionSet, level: Int) -> Cost {
        var cost = Cost()
        // Fields deep plus spreads followed: bounded so the walk's own recursion is.
        guard level <= GraphQLLimits.maxDepth * 2, !tooDeep else {
            tooDeep = true
            return cost
        }
        for selection in set.selections {
            switch selection {
            case let field as Field:
                cost.fields += 1
                cost.directives += field.directives.count
                if let inner = field.selectionSet {
                    var nested = selections(inner, level: level + 1)
                    nested.depth += 1
                    cost.add(nested)
                } else {
                    cost.depth = max(cost.depth, 1)
                }
            case let inline as InlineFragment:
                cost.directives += inline.directives.count
                cost.add(selections(inline.selectionSet, level: level + 1))
            case let spread as FragmentSpread:
                cost.directives += spread.directives.count
                cost.add(fragment(spread.name.value, level: level + 1))
            default: break
            }
        }
        return cost
    }

    private mutating func fragment(_ name: String, level: Int) -> Cost {
        if let known = measured[name] { return known }
        guard let definition = fragments[name], !measuring.contains(name) else { return Cost() }
        measuring.insert(name)
        var cost = selections(definition.selectionSet, level: level)
        cost.directives += definition.directives.count
        measuring.remove(name)
        measured[name] = cost
        return cost
    }
}

/// A JSON request body or `variables` read into GraphQLSwift's `Map` in one
/// pass. `Map`'s own `Decodable` decodes every object twice, which doubles
/// the cost per level of nesting; this decodes each value once and stops at
/// `GraphQLLimits.maxInputDepth` and `maxInputValues`.
struct GraphQLInput: Decodable {
    let map: Map

    /// Why the input was refused; the message says which limit.
    struct OverLimit: Error {
        let message: String
    }

    /// Values decoded so far in one request, shared by its nested decoders.
    final class Budget: Sendable {
        let count = Mutex(0)
        static let key = CodingUserInfoKey(rawValue: "authmock.graphql.budget")!
    }

    static func decode(_ data: Data) throws -> Map {
        let decoder = JSONDecoder()
        decoder.userInfo[Budget.key] = Budget()
        return try decoder.decode(GraphQLInput.self, from: data).map
    }

    init(from decoder: Decoder) throws {
        if decoder.codingPath.count > GraphQLLimits.maxInputDepth {
            throw OverLimit(message: "the JSON nests deeper than \(GraphQLLimits.maxInputDepth) levels")
        }
        if let budget = decoder.userInfo[Budget.key] as? Budget {
            let spent = budget.count.withLock { count in
                count += 1
                return count
            }
            if spent > GraphQLLimits.maxInputValues { throw OverLimit(message: "the JSON has more than \(GraphQLLimits.maxInputValues) values") }
        }
        if let single = try? decoder.singleValueContainer() {
            if single.decodeNil() {
                map = .null
                return
            }
            if let bool = try? single.decode(Bool.self) {
                map = .bool(bool)
                return
            }
            if let number = try? single.decode(Double.self) {
                map = .number(Number(number))
                return
            }
            if let string = try? single.decode(String.self) {
                map = .string(string)
                return
            }
        }
        if let object = try? decoder.container(keyedBy: AnyKey.self) {
            var values: OrderedDictionary<String, Map> = [:]
            for key in object.allKeys { values[key.stringValue] = try object.decode(GraphQLInput.self, forKey: key).map }
            map = .dictionary(values)
            return
        }
        var array = try decoder.unkeyedContainer()
        var values: [Map] = []
        while !array.isAtEnd { values.append(try array.decode(GraphQLInput.self).map) }
        map = .array(values)
    }

    private struct AnyKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
