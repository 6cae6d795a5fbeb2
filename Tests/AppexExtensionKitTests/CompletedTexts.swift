import AppexWire
import AppexWireIO

/// The answer texts of a CompleteRequest, or nil for any other message.
func completedTexts(_ frame: ReceivedFrame) -> [String]? {
    guard case .completeRequest(let answer) = frame.message else { return nil }
    return answer.items.map { $0.attributedContentText ?? "" }
}
