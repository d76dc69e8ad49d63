"""Reads the records examples/evolving_records.cpp wrote, with Python's protobuf and the .proto
it emitted: protoc makes the class, tablio.messages reads the TFRecord file's records and the
archive's objects with it.

    read_evolving.py FOLDER
"""
import pathlib
import subprocess
import sys

import tablio

folder = pathlib.Path(sys.argv[1])
subprocess.run(["protoc", f"--proto_path={folder}", f"--python_out={folder}", "utterance.proto"], check=True)
sys.path.insert(0, str(folder))
import utterance_pb2  # noqa: E402  (just made by protoc)

for table in (f"tfrecord:{folder / 'utterances.tfrecord'}", f"scp:{folder / 'utterances.scp'}"):
    count = 0
    for key, u in tablio.messages(table, utterance_pb2.utterance):
        assert u.id == f"utt{count}".encode() and u.speaker == 100 + count and len(u.feats) == 8  # ids: bytes
        assert not u.HasField("transcript")  # release 1 had none: release 2 reads its "(none)"
        print(key, u.id, u.speaker, list(u.feats)[:2])
        count += 1
    assert count == 3

# Python's protobuf writes back the bytes tablio wrote (deterministic serialization), and tablio
# reads what Python writes: a record of release 2's message with every field set.
for key, record in tablio.open(f"tfrecord:{folder / 'utterances.tfrecord'}", type="bytes"):
    assert utterance_pb2.utterance.FromString(record).SerializeToString(deterministic=True) == record
with tablio.writer(f"tfrecord:{folder / 'from_python.tfrecord'}", type="bytes") as out:
    out.append(utterance_pb2.utterance(id=b"py0", speaker=-5, transcript=b"hello", feats=[1.5, -2.0])
               .SerializeToString(deterministic=True))
