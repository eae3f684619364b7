import sys, time
from dataclasses import dataclass
from cyclonedds.domain import DomainParticipant
from cyclonedds.topic import Topic
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.annotations import key
from cyclonedds.idl.types import int32
@dataclass
class Msg(IdlStruct, typename="HelloWorldData::Msg"):
    userID: int32
    key("userID")
    message: str
dp = DomainParticipant(87)
tp = Topic(dp, "HelloWorldData_Msg", Msg)
ep = DataWriter(dp, tp) if sys.argv[1] == "w" else DataReader(dp, tp)
time.sleep(4)
