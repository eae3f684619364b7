"""The values both sides of the corpus interop tests expect, built with the classes that
halyard-idlc's Python back end generated (GENERATED_DIR must be on sys.path)."""
import Common  # noqa: E402
import Corpus as C  # noqa: E402
import HelloWorldData  # noqa: E402
import HelloWorld as HW  # noqa: E402

P = Common.Point
Color = Common.Color
SAMPLES = {
    "HelloWorldData::Msg": HelloWorldData.Msg(userID=7, message="Hello World"),
    "HelloWorld": HW.HelloWorld(index=3, message="HelloWorld"),
    "Corpus::Primitives": C.Primitives(
        b=True, o=0xAB, c="z", i8=-5, u8=250, s=-1234, us=60000, l=-123456, ul=4000000000,
        ll=-9000000000000000, ull=18000000000000000000, f=1.25, d=-2.5e10),
    "Corpus::Strings": C.Strings(s="plain", bs="bounded"),
    "Corpus::Sequences": C.Sequences(ls=[1, 2, 3], bls=[4, 5], ss=["a", "bc", ""],
                                     ps=[P(x=1, y=2), P(x=3, y=4)], bytes=[0, 1, 255]),
    "Corpus::Arrays": C.Arrays(a=[1, 2, 3], m=[[1, 2, 3], [4, 5, 6]], s=["x", "yz"],
                               pts=[P(x=1, y=1), P(x=2, y=2)], raw=bytes([9, 8, 7, 6])),
    "Corpus::Maps": C.Maps(id=1, m={1: 0.5, 2: 1.5}),
    "Corpus::Keyed": C.Keyed(id=42, name="key", value=3.5),
    "Corpus::Optionals": C.Optionals(a=5, b=None, c=6),
    "Corpus::AppendableT": C.AppendableT(a=1, b="two", more=["x", "y"]),
    "Corpus::MutableT": C.MutableT(id=9, s="mut", d=0.25, p=P(x=5, y=6)),
    "Corpus::MutableIds": C.MutableIds(a=1, b="b", c=3),
    "Corpus::AutoHash": C.AutoHash(alpha=11, beta="beta"),
    "Corpus::Base": C.Base(id=76),
    "Corpus::Derived": C.Derived(id=77, name="derived"),
    "Corpus::MBase": C.MBase(id=2, tag="mb"),
    "Corpus::MDerived": C.MDerived(id=1, tag="t", x=2.5, y=3),
    "Corpus::WithUnion": C.WithUnion(
        tag=1, u=C.Shape(discriminator=1, value=4), v=C.Shape(discriminator=3, value="lbl"),
        w=C.Shape(discriminator=99, value=1.5)),
    "Corpus::WithEnumUnion": C.WithEnumUnion(
        a=C.ByColor(discriminator=Color.RED, value=5),
        b=C.ByColor(discriminator=Color.GREEN, value="green"),
        c=C.ByColor(discriminator=Color.BLUE, value=None)),
    "Corpus::WithAppendableUnion": C.WithAppendableUnion(u=C.AppU(discriminator=2, value="why"), after=8),
    "Corpus::Typedefs": C.Typedefs(ls=[1, 2], m=[[1, 2], [3, 4]], n="name"),
    "Corpus::Defaults": C.Defaults(a=5, b=2.5, c="c"),
    "Corpus::NestedT": C.NestedT(p=P(x=7, y=8), c=Color.GREEN, k=C.Keyed(id=1, name="k", value=0.5)),
    "Corpus::UsesConstants": C.UsesConstants(names=["a", "b"], arr=[1, 2, 3, 4, 5, 6, 7, 8]),
    "Corpus::Keywords": C.Keywords(type_=1, match_="m", self=2, from_=True),
    "Corpus::WithBits": C.WithBits(p=C.Perm(READ=True, WRITE=False, EXEC=True), v=4),
}

